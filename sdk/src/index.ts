/**
 * `@servicepay/node`: the typed Node SDK for ServicePay.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(); // reads SERVICEPAY_SECRET_KEY (and SERVICEPAY_API_URL)
 * const session = await servicepay.sessions.create({ amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } });
 */
export { APIPromise, type ResponseInfo } from './api-promise.ts';
export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_RETRY_AFTER,
  DEFAULT_TIMEOUT,
  ServicePay,
} from './client.ts';
export * from './errors.ts';
export { type ExportFile, ExportPromise, type ExportStream } from './export-promise.ts';
export type { FetchLike, RequestOptions, ServicePayOptions } from './options.ts';
export { type ListParams, Page, PagePromise } from './pagination.ts';
// The types of what the methods take, for convenience; the schemas (and every type) live in
// '@servicepay/node/protocol'.
export type {
  BalanceTransactionType,
  CreateRefundParams,
  CreateSessionParams,
  CreateWebhookEndpointParams,
  Environment,
  ErrorCode,
  FieldError,
  Payer,
  RefundReason,
  RefundStatus,
  ResendEventParams,
  SessionStatus,
  SimulateTransferParams,
  UpdateWebhookEndpointParams,
  WebhookDeliveryStatus,
  WebhookEventType,
} from './protocol/index.ts';
export { BalanceResource } from './resources/balance-resource.ts';
export { BalanceTransactions, type ListBalanceTransactionsParams } from './resources/balance-transactions.ts';
export { Events } from './resources/events.ts';
export { type ExportParams, Exports } from './resources/exports.ts';
export { type ListPaymentLinksParams, PaymentLinks } from './resources/payment-links.ts';
export { type ListRefundsParams, Refunds } from './resources/refunds.ts';
export { type ListSessionsParams, Sessions } from './resources/sessions.ts';
export { TestHelpers, type TestPayParams } from './resources/test-helpers.ts';
export {
  type ListWebhookDeliveriesParams,
  type ListWebhookEndpointsParams,
  type UpsertedWebhookEndpoint,
  WebhookEndpoints,
} from './resources/webhook-endpoints.ts';
// The types of what the methods return: the contract's, read leniently (values and fields added later pass).
export type {
  Balance,
  BalanceTransaction,
  CreatedSession,
  DeletedWebhookEndpoint,
  KnownWebhookEvent,
  Mismatch,
  PaymentLink,
  Refund,
  ResendEventResult,
  Session,
  SimulatedTransfer,
  TestAccount,
  TestPayment,
  UnappliedCredit,
  UnknownEventType,
  UnknownWebhookEvent,
  VirtualAccount,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEvent,
} from './responses.ts';
export { type GenerateTestEventOptions, generateTestEvent, type TestEvent } from './test-events.ts';
export {
  type ConstructEventOptions,
  constructEvent,
  constructEventAsync,
  DEFAULT_TOLERANCE_SECONDS,
  type GenerateTestHeaderOptions,
  type GenerateTestWebhookOptions,
  generateTestHeader,
  generateTestWebhook,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeader,
  type TestWebhook,
  verifySignature,
  verifySignatureAsync,
  Webhooks,
} from './webhooks.ts';
