import {
  CreateWebhookEndpointParamsSchema,
  DeletedWebhookEndpointSchema,
  ListWebhookDeliveriesParamsSchema,
  ListWebhookEndpointsParamsSchema,
  ResendEventParamsSchema,
  ResendEventResultSchema,
  UpdateWebhookEndpointParamsSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from '@servicepay/node/protocol';
import { defineOperation, emptyBody, json } from './operation.ts';

/**
 * Webhook endpoints as a resource (`/api/webhooks`), their deliveries, and resending an event. Secret key only,
 * scoped to the key's business and environment.
 *
 * @example
 * mountOperations(app, WEBHOOK_ENDPOINT_OPERATIONS, deps); // as createApp mounts every table
 */
export const WEBHOOK_ENDPOINT_OPERATIONS = [
  defineOperation({
    method: 'post',
    path: '/api/webhooks',
    operationId: 'createWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Register a webhook endpoint',
    auth: 'secretKey',
    body: {
      schema: CreateWebhookEndpointParamsSchema,
      name: 'CreateWebhookEndpointParams',
      required: true,
      what: 'webhook endpoint',
      absent: 'empty-object',
    },
    idempotency: 'replay',
    success: {
      201: json(
        'The endpoint with its signing secret (shown this once).',
        WebhookEndpointWithSecretSchema,
        'WebhookEndpointWithSecret',
      ),
    },
    errors: [409],
    handler: async ({ caller, body }, { webhooks }) => ({
      status: 201,
      data: await webhooks.create(caller, body),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/webhooks',
    operationId: 'listWebhookEndpoints',
    tag: 'Webhooks',
    summary: 'List webhook endpoints',
    auth: 'secretKey',
    query: ListWebhookEndpointsParamsSchema,
    success: { 200: json('A page of endpoints.', WebhookEndpointSchema, 'WebhookEndpoint', true) },
    errors: [],
    handler: async ({ caller, query }, { webhooks }) => ({ page: await webhooks.list(caller, query) }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/webhooks/{id}',
    operationId: 'retrieveWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Retrieve a webhook endpoint',
    auth: 'secretKey',
    success: { 200: json('The endpoint (never its secret).', WebhookEndpointSchema, 'WebhookEndpoint') },
    errors: [404],
    handler: async ({ caller, params }, { webhooks }) => ({
      data: await webhooks.retrieve(caller, params.id),
    }),
  }),
  defineOperation({
    method: 'patch',
    path: '/api/webhooks/{id}',
    operationId: 'updateWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Change, disable or enable a webhook endpoint',
    auth: 'secretKey',
    body: {
      schema: UpdateWebhookEndpointParamsSchema,
      name: 'UpdateWebhookEndpointParams',
      required: true,
      what: 'webhook endpoint',
      absent: 'empty-object',
    },
    success: { 200: json('The endpoint.', WebhookEndpointSchema, 'WebhookEndpoint') },
    errors: [404],
    handler: async ({ caller, params, body }, { webhooks }) => ({
      data: await webhooks.update(caller, params.id, body),
    }),
  }),
  defineOperation({
    method: 'delete',
    path: '/api/webhooks/{id}',
    operationId: 'deleteWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    auth: 'secretKey',
    success: { 200: json('The deleted id.', DeletedWebhookEndpointSchema, 'DeletedWebhookEndpoint') },
    errors: [404],
    handler: async ({ caller, params }, { webhooks }) => ({ data: await webhooks.remove(caller, params.id) }),
  }),
  defineOperation({
    method: 'post',
    path: '/api/webhooks/{id}/roll-secret',
    operationId: 'rollWebhookSecret',
    tag: 'Webhooks',
    summary: 'Roll the signing secret (the previous one signs beside it for 24 h)',
    auth: 'secretKey',
    body: emptyBody,
    idempotency: 'replay',
    success: {
      200: json(
        'The endpoint with its new secret.',
        WebhookEndpointWithSecretSchema,
        'WebhookEndpointWithSecret',
      ),
    },
    errors: [404, 409],
    handler: async ({ caller, params }, { webhooks }) => ({
      data: await webhooks.rollSecret(caller, params.id),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: "An endpoint's deliveries with every attempt",
    auth: 'secretKey',
    query: ListWebhookDeliveriesParamsSchema,
    success: { 200: json('A page of deliveries.', WebhookDeliverySchema, 'WebhookDelivery', true) },
    errors: [404],
    handler: async ({ caller, params, query }, { webhooks }) => ({
      page: await webhooks.listDeliveries(caller, params.id, query),
    }),
  }),
  defineOperation({
    method: 'post',
    path: '/api/events/{id}/resend',
    operationId: 'resendEvent',
    tag: 'Webhooks',
    summary: 'Deliver an event again',
    auth: 'secretKey',
    body: {
      schema: ResendEventParamsSchema,
      name: 'ResendEventParams',
      required: false,
      what: 'resend request',
      absent: 'empty-object',
    },
    idempotency: 'replay',
    success: { 202: json('The deliveries queued.', ResendEventResultSchema, 'ResendEventResult') },
    errors: [404, 409],
    handler: async ({ caller, params, body }, { webhooks }) => ({
      status: 202,
      data: await webhooks.resend(caller, params.id, body.endpointId),
    }),
  }),
];
