import {
  BankNotificationSchema,
  BootstrapParamsSchema,
  BootstrapResultSchema,
  CancelledSessionSchema,
  CheckoutProfileSchema,
  CreatedSessionSchema,
  CreateRefundParamsSchema,
  CreateSessionParamsSchema,
  CreateWebhookEndpointParamsSchema,
  DeletedWebhookEndpointSchema,
  ListRefundsParamsSchema,
  ListSessionsParamsSchema,
  ListWebhookDeliveriesParamsSchema,
  ListWebhookEndpointsParamsSchema,
  NewAccountResultSchema,
  RefundSchema,
  ResendEventParamsSchema,
  ResendEventResultSchema,
  SessionSchema,
  SimulatedTransferSchema,
  SimulateTransferParamsSchema,
  StatusMessageSchema,
  TestAccountSchema,
  UpdateWebhookEndpointParamsSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from '@servicepay/node/protocol';
import { z } from 'zod';
import type { NotificationResult } from '../db/bank-notifications.ts';
import {
  CreateEndpointFormSchema,
  DeleteEndpointFormSchema,
  DeliveriesQuerySchema,
  EndpointStateFormSchema,
  EventQuerySchema,
  EventsQuerySchema,
  ExpireFormSchema,
  RefundFormSchema,
  RequestsQuerySchema,
  ResendEventFormSchema,
  ResendFormSchema,
  RevealSecretFormSchema,
  RollKeyFormSchema,
  SessionDetailQuerySchema,
  SessionsQuerySchema,
  SignInFormSchema,
  SignInQuerySchema,
  SignOutFormSchema,
  TransferFormSchema,
  WebhooksQuerySchema,
} from '../portal/forms.ts';

/** How a route is authorised; several entries on one operation are alternatives. */
export type SecurityName = 'secretKey' | 'publishableKey' | 'widgetToken' | 'bankSignature' | 'portalSession';

/** A success answer: `data` in the envelope (`list`: an array with pagination), or a page, a redirect, a stream. */
export type SuccessSpec =
  | { kind: 'json'; description: string; data: z.ZodType; name: string; list?: boolean }
  | { kind: 'html'; description: string }
  | { kind: 'redirect'; description: string }
  | { kind: 'event-stream'; description: string }
  | { kind: 'stream-head'; description: string }
  | { kind: 'asset'; description: string };

/** One operation of the service: what it takes and what it answers, by the schemas that check it. */
export interface OperationSpec {
  method: 'get' | 'head' | 'post' | 'patch' | 'delete';
  /** OpenAPI path, `{id}` for parameters. */
  path: string;
  operationId: string;
  tag: 'Sessions' | 'Refunds' | 'Checkout' | 'Webhooks' | 'Bank' | 'Testing' | 'Service' | 'Portal';
  summary: string;
  description?: string;
  security: SecurityName[];
  query?: z.ZodObject;
  /** A JSON body, named for `components.schemas`. */
  body?: { schema: z.ZodType; name: string; required: boolean };
  /** A portal form (`application/x-www-form-urlencoded`). */
  form?: z.ZodObject;
  headers?: Array<{ name: string; description: string; required: boolean; schema: Record<string, unknown> }>;
  success: Record<number, SuccessSpec>;
  /** Error statuses this operation answers (in the error envelope, or as a page for the portal). */
  errors: number[];
}

/**
 * `data` of `POST /bank/notifications`: what the service made of the bank's notice.
 *
 * @example
 * BankNotificationResultSchema.parse({ id: 'ntf_1', result: 'credited', duplicate: false });
 */
export const BankNotificationResultSchema = z.object({
  id: z.string(),
  result: z.enum([
    'credited',
    'mismatch',
    'not_credited',
    'unapplied',
    'unknown_account',
  ] as const satisfies readonly NotificationResult[]),
  duplicate: z.boolean(),
});

/**
 * The body the SDK sends on a POST that takes no parameters (cancel, new account, roll secret, the test
 * helpers): `{}` with `Content-Type: application/json`. Optional: the same POST without a body is taken too.
 *
 * @example
 * EmptyBodySchema.parse({});
 */
export const EmptyBodySchema = z.object({}).strict();

/**
 * One message of the push stream `GET /api/widget/sessions/{id}/events` as its server-sent event: `id:` the
 * transition's sequence number (what `Last-Event-ID` resumes after), `event: status`, and `data:` a
 * `StatusMessage` as JSON. The stream opens with `retry: 1000` and sends `: heartbeat` comments between.
 *
 * @example
 * StatusEventSchema.parse({ id: '7', event: 'status', data: message });
 */
export const StatusEventSchema = z.object({
  id: z.string().regex(/^\d{1,15}$/),
  event: z.literal('status'),
  data: StatusMessageSchema,
});

/**
 * `data` of `GET /health`.
 *
 * @example
 * HealthSchema.parse({ status: 'ok' });
 */
export const HealthSchema = z.object({ status: z.literal('ok') });
/** `GET /health/live`: the process answers (issue 28). */
export const LiveSchema = z.object({ status: z.literal('live') });
/** `GET /health/ready`: the database answers and a probe write commits (issue 28). */
export const ReadySchema = z.object({ status: z.literal('ready') });

const json = (description: string, data: z.ZodType, name: string, list = false): SuccessSpec => ({
  kind: 'json',
  description,
  data,
  name,
  ...(list ? { list } : {}),
});
const page = (description: string): SuccessSpec => ({ kind: 'html', description });
const redirect = (description: string): SuccessSpec => ({ kind: 'redirect', description });

/** Statuses of every secret-key route (spec §5, §7): no or a bad key, a refused key, the rate limit. */
const SECRET_KEY_ERRORS = [400, 401, 403, 429];
/** Statuses of a route that reads a JSON body: malformed (400), too large (413), not JSON (415). */
const BODY_ERRORS = [400, 413, 415];
const PORTAL_PAGE_ERRORS = [400, 403, 404];
/** A portal form's refusals; only sign-in counts failures and answers 429 (its own list). */
const PORTAL_FORM_ERRORS = [400, 403, 404, 409, 413, 415];

/** The optional `{}` the SDK sends on a POST without parameters (`EmptyBodySchema`). */
const emptyBody = { schema: EmptyBodySchema, name: 'EmptyBody', required: false };

/** The push stream's resume point, on its GET and its HEAD. */
const lastEventIdHeader = {
  name: 'Last-Event-ID',
  description: 'Resume after this event id.',
  required: false,
  schema: { type: 'string', pattern: '^\\d{1,15}$' },
};

const idempotencyKey = {
  name: 'Idempotency-Key',
  description:
    'Same key, route and body within 24 h answers the first success again, byte for byte (Idempotent-Replayed: true); another body or route: 409 idempotency_key_reused.',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/**
 * Every operation the reference server's API app answers, mapped to the protocol schemas that check its input
 * and describe its output. `test/api/openapi.test.ts` compares this with the routes the app really serves.
 *
 * @example
 * OPERATIONS.find((operation) => operation.operationId === 'createSession')?.body?.name; // 'CreateSessionParams'
 */
export const OPERATIONS: readonly OperationSpec[] = [
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    tag: 'Service',
    summary: 'Health check (for a load balancer)',
    description:
      'Answers 200 when the service can reach its database (one `SELECT 1` on PostgreSQL, at most 2 s; a check of the open handle on SQLite), else 503 `service_unavailable` with `Retry-After: 1`, and 200 again by itself once the database answers.',
    security: [],
    success: { 200: json('The service is up and its database answers.', HealthSchema, 'Health') },
    errors: [503],
  },
  {
    method: 'get',
    path: '/health/live',
    operationId: 'healthLive',
    tag: 'Service',
    summary: 'Liveness (for a supervisor)',
    description:
      'Answers 200 whenever the process can answer; it never asks the database, so a database outage does not get instances restarted.',
    security: [],
    success: { 200: json('The process answers.', LiveSchema, 'Live') },
    errors: [],
  },
  {
    method: 'get',
    path: '/health/ready',
    operationId: 'healthReady',
    tag: 'Service',
    summary: 'Readiness (for a load balancer)',
    description:
      'Answers 200 when the database answers and one probe write commits within 2 s (probes share one write, reused for 1 s); else 503 `service_unavailable` with `Retry-After: 1` (`storage_full` while the disk is full).',
    security: [],
    success: { 200: json('The instance can take traffic.', ReadySchema, 'Ready') },
    errors: [503],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    tag: 'Service',
    summary: 'This OpenAPI 3.1 document',
    description:
      'Generated at start from the zod schemas of `@servicepay/node/protocol` with `z.toJSONSchema`.',
    security: [],
    success: { 200: { kind: 'asset', description: 'The OpenAPI document (JSON).' } },
    errors: [],
  },
  {
    method: 'post',
    path: '/api/widget/sessions',
    operationId: 'createSession',
    tag: 'Sessions',
    summary: 'Create a payment session',
    description: 'Amount in minor units; the client secret in the answer is shown this once.',
    security: ['secretKey'],
    body: { schema: CreateSessionParamsSchema, name: 'CreateSessionParams', required: true },
    headers: [idempotencyKey],
    success: { 201: json('The session, with its client secret.', CreatedSessionSchema, 'CreatedSession') },
    errors: [...SECRET_KEY_ERRORS, 409, 413, 415],
  },
  {
    method: 'get',
    path: '/api/widget/sessions',
    operationId: 'listSessions',
    tag: 'Sessions',
    summary: 'List sessions, newest first',
    security: ['secretKey'],
    query: ListSessionsParamsSchema,
    success: { 200: json('A page of sessions.', SessionSchema, 'Session', true) },
    errors: SECRET_KEY_ERRORS,
  },
  {
    method: 'get',
    path: '/api/widget/sessions/{id}',
    operationId: 'retrieveSession',
    tag: 'Sessions',
    summary: 'Retrieve a session',
    security: ['secretKey'],
    success: { 200: json('The session.', SessionSchema, 'Session') },
    errors: [...SECRET_KEY_ERRORS, 404],
  },
  {
    method: 'post',
    path: '/api/widget/sessions/{id}/cancel',
    operationId: 'cancelSession',
    tag: 'Sessions',
    summary: 'Cancel an open session (merchant or payer)',
    description:
      "With the secret key the answer is the `Session`; with the checkout's widget token it is the `PublicSession` (no payer details, no metadata), like every answer to a widget token.",
    security: ['secretKey', 'widgetToken'],
    body: emptyBody,
    headers: [idempotencyKey],
    success: {
      200: json(
        'The cancelled session: `Session` to a secret key, `PublicSession` to a widget token.',
        CancelledSessionSchema,
        'CancelledSession',
      ),
    },
    errors: [...SECRET_KEY_ERRORS, 404, 409],
  },
  {
    method: 'post',
    path: '/api/widget/sessions/{id}/refunds',
    operationId: 'createRefund',
    tag: 'Refunds',
    summary: 'Refund (part of) a successful session',
    description:
      'Sends `amount` (minor units; default: all that is left to refund) back to the account the payer paid from. Answers the refund once the bank answered (`succeeded` or `failed`), or `pending` if it is slow; `refund.succeeded` / `refund.failed` tell the outcome. 409 `session_not_refundable` for a session that was not paid, 409 `session_fully_refunded` when nothing is left, 400 `refund_exceeds_remaining` (its message says how much is left) for more than is left.',
    security: ['secretKey'],
    body: { schema: CreateRefundParamsSchema, name: 'CreateRefundParams', required: false },
    headers: [idempotencyKey],
    success: { 201: json('The refund.', RefundSchema, 'Refund') },
    errors: [...SECRET_KEY_ERRORS, 404, 409, 413, 415],
  },
  {
    method: 'get',
    path: '/api/widget/sessions/{id}/refunds',
    operationId: 'listSessionRefunds',
    tag: 'Refunds',
    summary: "List a session's refunds, newest first",
    security: ['secretKey'],
    query: ListRefundsParamsSchema,
    success: { 200: json('A page of refunds.', RefundSchema, 'Refund', true) },
    errors: [...SECRET_KEY_ERRORS, 404],
  },
  {
    method: 'get',
    path: '/api/refunds',
    operationId: 'listRefunds',
    tag: 'Refunds',
    summary: "List every refund of the key's environment, newest first",
    security: ['secretKey'],
    query: ListRefundsParamsSchema,
    success: { 200: json('A page of refunds.', RefundSchema, 'Refund', true) },
    errors: SECRET_KEY_ERRORS,
  },
  {
    method: 'get',
    path: '/api/refunds/{id}',
    operationId: 'retrieveRefund',
    tag: 'Refunds',
    summary: 'Retrieve a refund',
    security: ['secretKey'],
    success: { 200: json('The refund.', RefundSchema, 'Refund') },
    errors: [...SECRET_KEY_ERRORS, 404],
  },
  {
    method: 'post',
    path: '/api/widget/bootstrap',
    operationId: 'bootstrapCheckout',
    tag: 'Checkout',
    summary: "Exchange a client secret for a widget token and the session's account",
    security: [],
    body: { schema: BootstrapParamsSchema, name: 'BootstrapParams', required: true },
    success: {
      200: json(
        'The widget token, the public session and its account.',
        BootstrapResultSchema,
        'BootstrapResult',
      ),
    },
    errors: [...BODY_ERRORS, 409, 410, 429],
  },
  {
    method: 'post',
    path: '/api/widget/sessions/{id}/accounts',
    operationId: 'newAccount',
    tag: 'Checkout',
    summary: 'A new virtual account after the previous one ran out',
    security: ['widgetToken'],
    body: emptyBody,
    headers: [idempotencyKey],
    success: { 201: json('The session and its new account.', NewAccountResultSchema, 'NewAccountResult') },
    errors: [400, 401, 403, 404, 409, 429],
  },
  {
    method: 'get',
    path: '/api/widget/sessions/{id}/events',
    operationId: 'sessionEvents',
    tag: 'Checkout',
    summary: "The checkout's real-time push (server-sent events)",
    description:
      'Each message is a `StatusEvent`: `event: status`, `id:` its sequence number, `data:` a `StatusMessage` as JSON; the first is the current state, and the stream ends after a terminal status.',
    security: ['widgetToken'],
    headers: [lastEventIdHeader],
    success: { 200: { kind: 'event-stream', description: 'A text/event-stream of status messages.' } },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'head',
    path: '/api/widget/sessions/{id}/events',
    operationId: 'sessionEventsHead',
    tag: 'Checkout',
    summary: "The push stream's head: its headers, without opening it",
    description:
      "Checks the token and `Last-Event-ID` as `GET` does and answers the stream's headers, then ends: nothing is held open.",
    security: ['widgetToken'],
    headers: [lastEventIdHeader],
    success: {
      200: { kind: 'stream-head', description: 'The headers the stream would open with; no body.' },
    },
    errors: [400, 401, 403, 404, 429],
  },
  {
    method: 'get',
    path: '/api/widget/profile',
    operationId: 'checkoutProfile',
    tag: 'Checkout',
    summary: "The business's public checkout profile",
    security: ['publishableKey', 'secretKey'],
    success: {
      200: json(
        'The merchant name, the environment and the currencies the service takes.',
        CheckoutProfileSchema,
        'CheckoutProfile',
      ),
    },
    errors: SECRET_KEY_ERRORS,
  },
  {
    method: 'post',
    path: '/api/test/sessions/{id}/account',
    operationId: 'openTestAccount',
    tag: 'Testing',
    summary: "Open a test session's checkout without the widget (its virtual account)",
    description:
      'What the widget bootstrap does for a session whose client secret was never used (marks it used, provisions the first account); for an open session, its current account, or a fresh one if the last ran out.',
    security: ['secretKey'],
    body: emptyBody,
    headers: [idempotencyKey],
    success: {
      200: json('The session, awaiting payment, and its account.', TestAccountSchema, 'TestAccount'),
    },
    errors: [...SECRET_KEY_ERRORS, 404, 409],
  },
  {
    method: 'post',
    path: '/api/test/sessions/{id}/expire',
    operationId: 'expireTestSession',
    tag: 'Testing',
    summary: "End a test session's lifetime now: `expired`, as at its natural end",
    description:
      'Brings the session\'s end forward to now and ends it with the sweeper\'s own code: the account is closed at the bank first, then `expired` (terminal), `session.expired` to your endpoints, and an open checkout shows "This payment has ended". If the bank answers that the account was already credited, the session is `successful` instead and this answers 409 `session_not_active`, as does an ended session.',
    security: ['secretKey'],
    body: emptyBody,
    headers: [idempotencyKey],
    success: { 200: json('The expired session.', SessionSchema, 'Session') },
    errors: [...SECRET_KEY_ERRORS, 404, 409],
  },
  {
    method: 'post',
    path: '/api/test/sessions/{id}/account/expire',
    operationId: 'expireTestAccount',
    tag: 'Testing',
    summary: "End a test session's account countdown now: back to `pending`, `account_expired`",
    description:
      "Brings the current account's end forward to now and ends it with the sweeper's own code: the account is closed at the bank first, then the session goes back to `pending` (reason `account_expired`, no webhook: the session is still open), and an open checkout shows EXPIRED with \"Get a new account number\". 409 `no_open_account` when no account is open; 409 `session_not_active` for an ended session, or when the bank's answer made it `successful`.",
    security: ['secretKey'],
    body: emptyBody,
    headers: [idempotencyKey],
    success: { 200: json('The session, pending again.', SessionSchema, 'Session') },
    errors: [...SECRET_KEY_ERRORS, 404, 409],
  },
  {
    method: 'post',
    path: '/api/test/transfers',
    operationId: 'testTransfer',
    tag: 'Testing',
    summary: "A simulated payer's transfer to a test session's account",
    security: ['secretKey'],
    body: { schema: SimulateTransferParamsSchema, name: 'SimulateTransferParams', required: true },
    headers: [idempotencyKey],
    success: {
      200: json(
        'What the bank did, and whether its notification was delivered.',
        SimulatedTransferSchema,
        'SimulatedTransfer',
      ),
    },
    errors: [...SECRET_KEY_ERRORS, 404, 409, 413, 415],
  },
  {
    method: 'post',
    path: '/bank/notifications',
    operationId: 'bankNotification',
    tag: 'Bank',
    summary: "The bank's signed notice of a transfer",
    description:
      'Signed `X-Bank-Signature: t=<unix>,v1=<hex HMAC-SHA256>` over the raw body; each id processed once.',
    security: ['bankSignature'],
    body: { schema: BankNotificationSchema, name: 'BankNotification', required: true },
    success: {
      200: json('What the service made of it.', BankNotificationResultSchema, 'BankNotificationResult'),
    },
    errors: [400, 401, 413],
  },
  {
    method: 'post',
    path: '/bank/transfers',
    operationId: 'bankCounterTransfer',
    tag: 'Bank',
    summary: "The simulated bank's payer counter (test accounts only)",
    security: [],
    body: { schema: SimulateTransferParamsSchema, name: 'SimulateTransferParams', required: true },
    success: { 200: json('What the bank did.', SimulatedTransferSchema, 'SimulatedTransfer') },
    errors: [...BODY_ERRORS, 403, 404, 429],
  },
  {
    method: 'post',
    path: '/api/webhooks',
    operationId: 'createWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Register a webhook endpoint',
    security: ['secretKey'],
    body: { schema: CreateWebhookEndpointParamsSchema, name: 'CreateWebhookEndpointParams', required: true },
    headers: [idempotencyKey],
    success: {
      201: json(
        'The endpoint with its signing secret (shown this once).',
        WebhookEndpointWithSecretSchema,
        'WebhookEndpointWithSecret',
      ),
    },
    errors: [...SECRET_KEY_ERRORS, 409, 413, 415],
  },
  {
    method: 'get',
    path: '/api/webhooks',
    operationId: 'listWebhookEndpoints',
    tag: 'Webhooks',
    summary: 'List webhook endpoints',
    security: ['secretKey'],
    query: ListWebhookEndpointsParamsSchema,
    success: { 200: json('A page of endpoints.', WebhookEndpointSchema, 'WebhookEndpoint', true) },
    errors: SECRET_KEY_ERRORS,
  },
  {
    method: 'get',
    path: '/api/webhooks/{id}',
    operationId: 'retrieveWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Retrieve a webhook endpoint',
    security: ['secretKey'],
    success: { 200: json('The endpoint (never its secret).', WebhookEndpointSchema, 'WebhookEndpoint') },
    errors: [...SECRET_KEY_ERRORS, 404],
  },
  {
    method: 'patch',
    path: '/api/webhooks/{id}',
    operationId: 'updateWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Change, disable or enable a webhook endpoint',
    security: ['secretKey'],
    body: { schema: UpdateWebhookEndpointParamsSchema, name: 'UpdateWebhookEndpointParams', required: true },
    success: { 200: json('The endpoint.', WebhookEndpointSchema, 'WebhookEndpoint') },
    errors: [...SECRET_KEY_ERRORS, 404, 413, 415],
  },
  {
    method: 'delete',
    path: '/api/webhooks/{id}',
    operationId: 'deleteWebhookEndpoint',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    security: ['secretKey'],
    success: { 200: json('The deleted id.', DeletedWebhookEndpointSchema, 'DeletedWebhookEndpoint') },
    errors: [...SECRET_KEY_ERRORS, 404],
  },
  {
    method: 'post',
    path: '/api/webhooks/{id}/roll-secret',
    operationId: 'rollWebhookSecret',
    tag: 'Webhooks',
    summary: 'Roll the signing secret (the previous one signs beside it for 24 h)',
    security: ['secretKey'],
    body: emptyBody,
    headers: [idempotencyKey],
    success: {
      200: json(
        'The endpoint with its new secret.',
        WebhookEndpointWithSecretSchema,
        'WebhookEndpointWithSecret',
      ),
    },
    errors: [...SECRET_KEY_ERRORS, 404, 409],
  },
  {
    method: 'get',
    path: '/api/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: "An endpoint's deliveries with every attempt",
    security: ['secretKey'],
    query: ListWebhookDeliveriesParamsSchema,
    success: { 200: json('A page of deliveries.', WebhookDeliverySchema, 'WebhookDelivery', true) },
    errors: [...SECRET_KEY_ERRORS, 404],
  },
  {
    method: 'post',
    path: '/api/events/{id}/resend',
    operationId: 'resendEvent',
    tag: 'Webhooks',
    summary: 'Deliver an event again',
    security: ['secretKey'],
    body: { schema: ResendEventParamsSchema, name: 'ResendEventParams', required: false },
    headers: [idempotencyKey],
    success: { 202: json('The deliveries queued.', ResendEventResultSchema, 'ResendEventResult') },
    errors: [...SECRET_KEY_ERRORS, 404, 409, 413, 415],
  },
  // --- the developer portal: HTML pages and url-encoded forms for a browser, not an API ---
  {
    method: 'get',
    path: '/portal',
    operationId: 'portalHome',
    tag: 'Portal',
    summary: 'Portal entry: to the sessions page, or to sign-in',
    security: [],
    success: { 303: redirect('To /portal/sessions or /portal/sign-in.') },
    errors: [],
  },
  {
    method: 'get',
    path: '/portal/assets/{name}',
    operationId: 'portalAsset',
    tag: 'Portal',
    summary: "The portal's stylesheet and script",
    security: [],
    success: { 200: { kind: 'asset', description: 'portal.css or portal.js.' } },
    errors: [404],
  },
  {
    method: 'get',
    path: '/portal/sign-in',
    operationId: 'portalSignInPage',
    tag: 'Portal',
    summary: 'Sign-in page (sets the sign-in form cookie)',
    description:
      "`environment` asks for a secret key of that environment: the header's Test data / Live data switch leads here, since a portal session reaches only the environment of the key that opened it.",
    security: [],
    query: SignInQuerySchema,
    success: {
      200: page('The sign-in form.'),
      303: redirect('Already signed in (to the environment asked for, if any).'),
    },
    errors: [],
  },
  {
    method: 'post',
    path: '/portal/sign-in',
    operationId: 'portalSignIn',
    tag: 'Portal',
    summary: "Sign in with a secret key (opens a portal session in that key's environment)",
    security: [],
    form: SignInFormSchema,
    success: { 303: redirect('Signed in: to the section in `returnTo`, else /portal/sessions.') },
    errors: [401, 403, 413, 415, 429],
  },
  {
    method: 'post',
    path: '/portal/sign-out',
    operationId: 'portalSignOut',
    tag: 'Portal',
    summary: 'Sign out',
    security: ['portalSession'],
    form: SignOutFormSchema,
    success: { 303: redirect('To the sign-in page.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/keys',
    operationId: 'portalKeys',
    tag: 'Portal',
    summary: 'API keys page',
    security: ['portalSession'],
    success: { 200: page('Keys by prefix and last four.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/keys/roll',
    operationId: 'portalRollKey',
    tag: 'Portal',
    summary: 'Roll a key (the old one stops at once; the new one shown once)',
    security: ['portalSession'],
    form: RollKeyFormSchema,
    success: { 200: page('The keys page with the new key.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/webhooks',
    operationId: 'portalWebhooks',
    tag: 'Portal',
    summary: 'Webhook endpoints page',
    security: ['portalSession'],
    query: WebhooksQuerySchema,
    success: { 200: page('The endpoints.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/webhooks',
    operationId: 'portalCreateEndpoint',
    tag: 'Portal',
    summary: 'Add a webhook endpoint',
    security: ['portalSession'],
    form: CreateEndpointFormSchema,
    success: { 201: page('The endpoints with the new secret.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/webhooks/{id}',
    operationId: 'portalEndpoint',
    tag: 'Portal',
    summary: 'One endpoint with its deliveries and attempts',
    security: ['portalSession'],
    query: DeliveriesQuerySchema,
    success: { 200: page('The endpoint.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/webhooks/{id}/reveal',
    operationId: 'portalRevealSecret',
    tag: 'Portal',
    summary: "Reveal an endpoint's signing secret (after a confirm)",
    security: ['portalSession'],
    form: RevealSecretFormSchema,
    success: { 200: page('The endpoint with its secret.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/webhooks/{id}/state',
    operationId: 'portalEndpointState',
    tag: 'Portal',
    summary: 'Enable or disable an endpoint',
    security: ['portalSession'],
    form: EndpointStateFormSchema,
    success: { 303: redirect('Back to the endpoint.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/webhooks/{id}/delete',
    operationId: 'portalDeleteEndpoint',
    tag: 'Portal',
    summary: 'Delete an endpoint (after a confirm), as DELETE /api/webhooks/{id} does',
    security: ['portalSession'],
    form: DeleteEndpointFormSchema,
    success: { 303: redirect('To the Webhooks page, with a note that it was deleted.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/webhooks/{id}/resend',
    operationId: 'portalResend',
    tag: 'Portal',
    summary: 'Resend an event to this endpoint',
    security: ['portalSession'],
    form: ResendFormSchema,
    success: { 303: redirect('Back to the endpoint.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/events',
    operationId: 'portalEvents',
    tag: 'Portal',
    summary: 'Events page: every event of the environment, newest first (type filter, paging)',
    security: ['portalSession'],
    query: EventsQuerySchema,
    success: { 200: page('A page of events.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/events/{id}',
    operationId: 'portalEvent',
    tag: 'Portal',
    summary: 'One event: its webhook body, each delivery with every attempt',
    security: ['portalSession'],
    query: EventQuerySchema,
    success: { 200: page('The event.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/events/{id}/resend',
    operationId: 'portalResendEvent',
    tag: 'Portal',
    summary: 'Resend an event to one endpoint, or to every enabled endpoint that takes its type',
    security: ['portalSession'],
    form: ResendEventFormSchema,
    success: { 303: redirect('Back to the event, with how many deliveries were queued.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/requests',
    operationId: 'portalRequests',
    tag: 'Portal',
    summary:
      "Request log: recent API requests made with the environment's keys (search by Request-Id, status class)",
    security: ['portalSession'],
    query: RequestsQuerySchema,
    success: { 200: page('A page of requests.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/requests/{id}',
    operationId: 'portalRequest',
    tag: 'Portal',
    summary: 'One logged request, with the error body of a refusal',
    security: ['portalSession'],
    success: { 200: page('The request.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/sessions',
    operationId: 'portalSessions',
    tag: 'Portal',
    summary: 'Sessions page (filters, paging)',
    security: ['portalSession'],
    query: SessionsQuerySchema,
    success: { 200: page('A page of sessions.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/sessions/{id}',
    operationId: 'portalSession',
    tag: 'Portal',
    summary: 'One session with its status history and account',
    security: ['portalSession'],
    query: SessionDetailQuerySchema,
    success: { 200: page('The session.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/sessions/{id}/expire',
    operationId: 'portalExpire',
    tag: 'Portal',
    summary: "End a test session's account countdown or lifetime now (as the test helpers do)",
    security: ['portalSession'],
    form: ExpireFormSchema,
    success: { 303: redirect('To the session, with a note of what ended.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/sessions/{id}/refunds',
    operationId: 'portalRefund',
    tag: 'Portal',
    summary: 'Refund a successful session: `review` shows what would go back, `confirm` refunds it',
    description:
      "The confirm refunds only while the session's refunds still hold `expectedRefunded` (what the review showed): a second press refunds nothing more (409). A refusal (more than is left, not paid) shows the session page again with the service's message.",
    security: ['portalSession'],
    form: RefundFormSchema,
    success: {
      200: page('The session page with the refund to confirm.'),
      303: redirect('To the session, with a note of how the refund ended.'),
    },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/bank',
    operationId: 'portalBank',
    tag: 'Portal',
    summary: 'Test bank page',
    security: ['portalSession'],
    success: { 200: page('Test sessions that take a transfer now.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
  {
    method: 'post',
    path: '/portal/bank/transfers',
    operationId: 'portalTransfer',
    tag: 'Portal',
    summary: "Send the right or a wrong amount to a test session's account",
    security: ['portalSession'],
    form: TransferFormSchema,
    success: { 303: redirect('To the session, with the outcome.') },
    errors: PORTAL_FORM_ERRORS,
  },
  {
    method: 'get',
    path: '/portal/kyc',
    operationId: 'portalKyc',
    tag: 'Portal',
    summary: 'KYC status page',
    security: ['portalSession'],
    success: { 200: page('KYC status.'), 303: redirect('Not signed in.') },
    errors: PORTAL_PAGE_ERRORS,
  },
];
