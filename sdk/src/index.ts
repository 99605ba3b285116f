/**
 * `@servicepay/node`: the typed Node SDK for ServicePay.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const session = await servicepay.sessions.create({ amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } });
 */
export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT,
  type RequestOptions,
  ServicePay,
  type ServicePayOptions,
} from './client.ts';
export * from './errors.ts';
export { type ListParams, Page, PagePromise } from './pagination.ts';
// The types of what the methods take and return, for convenience; the schemas (and every type) live in
// '@servicepay/node/protocol'.
export type {
  CreatedSession,
  CreateSessionParams,
  CreateWebhookEndpointParams,
  Environment,
  ErrorCode,
  FieldError,
  Payer,
  ResendEventParams,
  ResendEventResult,
  Session,
  SessionStatus,
  SimulatedTransfer,
  SimulateTransferParams,
  UpdateWebhookEndpointParams,
  VirtualAccount,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEvent,
  WebhookEventType,
} from './protocol/index.ts';
export { Events } from './resources/events.ts';
export { type ListSessionsParams, Sessions } from './resources/sessions.ts';
export { TestHelpers } from './resources/test-helpers.ts';
export {
  type DeletedWebhookEndpoint,
  type ListWebhookDeliveriesParams,
  type ListWebhookEndpointsParams,
  WebhookEndpoints,
} from './resources/webhook-endpoints.ts';
export {
  type ConstructEventOptions,
  constructEvent,
  constructEventAsync,
  DEFAULT_TOLERANCE_SECONDS,
  type GenerateTestHeaderOptions,
  generateTestHeader,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeader,
  verifySignature,
  Webhooks,
} from './webhooks.ts';
