import { CreateRefundParamsSchema, ListRefundsParamsSchema, RefundSchema } from '@servicepay/node/protocol';
import { defineOperation, json } from './operation.ts';

/**
 * The merchant's API for refunds (secret key): create and list a session's, list all, retrieve one.
 *
 * @example
 * mountOperations(app, REFUND_OPERATIONS, deps); // as createApp mounts every table
 */
export const REFUND_OPERATIONS = [
  // `idempotency`: a retry with the same key answers the first refund again, whatever became of it since.
  defineOperation({
    method: 'post',
    path: '/api/widget/sessions/{id}/refunds',
    operationId: 'createRefund',
    tag: 'Refunds',
    summary: 'Refund (part of) a successful session',
    description:
      'Sends `amount` (minor units; default: all that is left to refund) back to the account the payer paid from. Answers the refund once the bank answered (`succeeded` or `failed`), or `pending` if it is slow; `refund.succeeded` / `refund.failed` tell the outcome. 409 `session_not_refundable` for a session that was not paid, 409 `session_fully_refunded` when nothing is left, 400 `refund_exceeds_remaining` (its message says how much is left) for more than is left.',
    auth: 'secretKey',
    body: {
      schema: CreateRefundParamsSchema,
      name: 'CreateRefundParams',
      required: false,
      what: 'refund',
      absent: 'empty-object',
    },
    idempotency: 'replay',
    success: { 201: json('The refund.', RefundSchema, 'Refund') },
    errors: [404, 409],
    handler: async ({ caller, params, body }, { refunds }) => ({
      status: 201,
      data: await refunds.create(caller, params.id, body),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/widget/sessions/{id}/refunds',
    operationId: 'listSessionRefunds',
    tag: 'Refunds',
    summary: "List a session's refunds, newest first",
    auth: 'secretKey',
    query: ListRefundsParamsSchema,
    success: { 200: json('A page of refunds.', RefundSchema, 'Refund', true) },
    errors: [404],
    handler: async ({ caller, params, query }, { refunds }) => ({
      page: await refunds.list(caller, { ...query, sessionId: params.id }),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/refunds',
    operationId: 'listRefunds',
    tag: 'Refunds',
    summary: "List every refund of the key's environment, newest first",
    auth: 'secretKey',
    query: ListRefundsParamsSchema,
    success: { 200: json('A page of refunds.', RefundSchema, 'Refund', true) },
    errors: [],
    handler: async ({ caller, query }, { refunds }) => ({ page: await refunds.list(caller, query) }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/refunds/{id}',
    operationId: 'retrieveRefund',
    tag: 'Refunds',
    summary: 'Retrieve a refund',
    auth: 'secretKey',
    success: { 200: json('The refund.', RefundSchema, 'Refund') },
    errors: [404],
    handler: async ({ caller, params }, { refunds }) => ({ data: await refunds.retrieve(caller, params.id) }),
  }),
];
