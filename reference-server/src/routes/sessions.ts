import {
  CancelledSessionSchema,
  CreatedSessionSchema,
  CreateSessionParamsSchema,
  ListSessionsParamsSchema,
  SessionSchema,
} from '@servicepay/node/protocol';
import { dataEnvelopeText } from '../middleware/envelope.ts';
import { idempotencyClaimFor } from '../middleware/idempotency.ts';
import { defineOperation, emptyBody, json } from './operation.ts';

/**
 * The merchant's API for payment sessions: create, list, retrieve, cancel.
 *
 * @example
 * mountOperations(app, SESSION_OPERATIONS, deps); // as createApp mounts every table
 */
export const SESSION_OPERATIONS = [
  // The busiest write of the API (issue 12): its Idempotency-Key is remembered in the session's own write job,
  // so one commit makes the session and its remembered answer, and the very text remembered is what is sent.
  // A retry of a create is answered from the key only when the create fails (`afterWrite`).
  defineOperation({
    method: 'post',
    path: '/api/widget/sessions',
    operationId: 'createSession',
    tag: 'Sessions',
    summary: 'Create a payment session',
    description: 'Amount in minor units; the client secret in the answer is shown this once.',
    auth: 'secretKey',
    body: {
      schema: CreateSessionParamsSchema,
      name: 'CreateSessionParams',
      required: true,
      what: 'session',
      absent: 'as-sent',
    },
    idempotency: 'in-write',
    success: { 201: json('The session, with its client secret.', CreatedSessionSchema, 'CreatedSession') },
    errors: [409],
    handler: async ({ caller, body, res }, { sessions }) => {
      let text = '';
      await sessions.create(caller, body, (created) => {
        text = dataEnvelopeText(created, 201);
        return idempotencyClaimFor(res, 201, text);
      });
      return { status: 201, text };
    },
  }),
  defineOperation({
    method: 'get',
    path: '/api/widget/sessions',
    operationId: 'listSessions',
    tag: 'Sessions',
    summary: 'List sessions, newest first',
    auth: 'secretKey',
    query: ListSessionsParamsSchema,
    success: { 200: json('A page of sessions.', SessionSchema, 'Session', true) },
    errors: [],
    handler: async ({ caller, query }, { sessions }) => ({
      page: await sessions.list(caller, { ...query, paymentLinkId: query.paymentLink }),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/widget/sessions/{id}',
    operationId: 'retrieveSession',
    tag: 'Sessions',
    summary: 'Retrieve a session',
    auth: 'secretKey',
    success: { 200: json('The session.', SessionSchema, 'Session') },
    errors: [404],
    handler: async ({ caller, params }, { sessions }) => ({
      data: await sessions.retrieve(caller, params.id),
    }),
  }),
  // The merchant (secret key) gets its Session; the payer's checkout (widget token) the PublicSession, so no
  // payer detail or metadata reaches the browser (the answer carries CORS for the widget hosts).
  defineOperation({
    method: 'post',
    path: '/api/widget/sessions/{id}/cancel',
    operationId: 'cancelSession',
    tag: 'Sessions',
    summary: 'Cancel an open session (merchant or payer)',
    description:
      "With the secret key the answer is the `Session`; with the checkout's widget token it is the `PublicSession` (no payer details, no metadata), like every answer to a widget token.",
    auth: 'secretKeyOrWidgetToken',
    body: emptyBody,
    idempotency: 'replay',
    success: {
      200: json(
        'The cancelled session: `Session` to a secret key, `PublicSession` to a widget token.',
        CancelledSessionSchema,
        'CancelledSession',
      ),
    },
    errors: [404, 409],
    handler: async ({ caller, params }, { sessions }) => ({
      data:
        caller.kind === 'widget'
          ? await sessions.cancelByPayer(params.id)
          : await sessions.cancel(params.id, 'cancelled_by_merchant', caller),
    }),
  }),
];
