import { type Lenient, lenient } from './internal/lenient.ts';
import {
  type CreatedSession as ContractCreatedSession,
  type DeletedWebhookEndpoint as ContractDeletedWebhookEndpoint,
  type Mismatch as ContractMismatch,
  type PaymentLink as ContractPaymentLink,
  type Refund as ContractRefund,
  type ResendEventResult as ContractResendEventResult,
  type Session as ContractSession,
  type SimulatedTransfer as ContractSimulatedTransfer,
  type TestAccount as ContractTestAccount,
  type UnappliedCredit as ContractUnappliedCredit,
  type VirtualAccount as ContractVirtualAccount,
  type WebhookAttempt as ContractWebhookAttempt,
  type WebhookDelivery as ContractWebhookDelivery,
  type WebhookEndpoint as ContractWebhookEndpoint,
  type WebhookEndpointWithSecret as ContractWebhookEndpointWithSecret,
  type WebhookEvent as ContractWebhookEvent,
  CreatedSessionSchema,
  DeletedWebhookEndpointSchema,
  type Environment,
  envelopeOf,
  listEnvelopeOf,
  PaymentLinkSchema,
  RefundSchema,
  ResendEventResultSchema,
  SessionSchema,
  SimulatedTransferSchema,
  TestAccountSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
  WebhookEventSchema,
  type WebhookEventType,
} from './protocol/index.ts';

// What the SDK returns. Each type is the contract's, read leniently (see `Lenient`): a session status, an
// event type or any other enum value a later service version adds arrives as the string it is, and fields it
// adds are kept on the object. The contract (`@servicepay/node/protocol`) keeps the strict types: what the
// service sends today.

/**
 * A payment session. `status` is one of today's statuses or, from a later service version, another string.
 *
 * @example
 * import type { Session } from '@servicepay/node';
 * const isPaid = (session: Session) => session.status === 'successful';
 */
export type Session = Lenient<ContractSession>;
/**
 * The creation answer: the session plus its `clientSecret`, shown this once.
 *
 * @example
 * import type { CreatedSession } from '@servicepay/node';
 * const forTheBrowser = (created: CreatedSession) => ({ clientSecret: created.clientSecret });
 */
export type CreatedSession = Lenient<ContractCreatedSession>;
/**
 * The one-time bank account the payer transfers to.
 *
 * @example
 * import type { VirtualAccount } from '@servicepay/node';
 * const show = (account: VirtualAccount) => `${account.bankName} ${account.accountNumber}`;
 */
export type VirtualAccount = Lenient<ContractVirtualAccount>;
/**
 * The last transfer of the wrong amount.
 *
 * @example
 * import type { Mismatch } from '@servicepay/node';
 * const short = (m: Mismatch) => m.expectedAmount - m.receivedAmount;
 */
export type Mismatch = Lenient<ContractMismatch>;
/**
 * A webhook endpoint (never with its secret).
 *
 * @example
 * import type { WebhookEndpoint } from '@servicepay/node';
 * const isOff = (endpoint: WebhookEndpoint) => !endpoint.enabled;
 */
export type WebhookEndpoint = Lenient<ContractWebhookEndpoint>;
/**
 * A webhook endpoint with its signing `secret`: the answer of create and roll-secret only.
 *
 * @example
 * import type { WebhookEndpointWithSecret } from '@servicepay/node';
 * const keep = (endpoint: WebhookEndpointWithSecret) => endpoint.secret;
 */
export type WebhookEndpointWithSecret = Lenient<ContractWebhookEndpointWithSecret>;
/**
 * One attempt of a delivery.
 *
 * @example
 * import type { WebhookAttempt } from '@servicepay/node';
 * const failed = (attempt: WebhookAttempt) => attempt.statusCode === null || attempt.statusCode >= 300;
 */
export type WebhookAttempt = Lenient<ContractWebhookAttempt>;
/**
 * One event on its way to one endpoint, with its attempts.
 *
 * @example
 * import type { WebhookDelivery } from '@servicepay/node';
 * const lastStatus = (delivery: WebhookDelivery) => delivery.attempts.at(-1)?.statusCode ?? null;
 */
export type WebhookDelivery = Lenient<ContractWebhookDelivery>;
/**
 * What `testHelpers.simulateTransfer` answers.
 *
 * @example
 * import type { SimulatedTransfer } from '@servicepay/node';
 * const credited = (transfer: SimulatedTransfer) => transfer.outcome === 'credited';
 */
export type SimulatedTransfer = Lenient<ContractSimulatedTransfer>;
/**
 * What `testHelpers.openAccount` answers: the session, awaiting payment, and the account to pay.
 *
 * @example
 * import type { TestAccount } from '@servicepay/node';
 * const payTo = (opened: TestAccount) => opened.virtualAccount.accountNumber;
 */
export type TestAccount = Lenient<ContractTestAccount>;
/**
 * What `testHelpers.pay` answers: the bank's transfer and the session read back after it.
 *
 * @example
 * import type { TestPayment } from '@servicepay/node';
 * const paid = (payment: TestPayment) => payment.session.status === 'successful';
 */
export interface TestPayment {
  /** The account the transfer went to. */
  virtualAccount: VirtualAccount;
  /** What the simulated bank did: `credited` (the exact amount) or `returned` (any other amount). */
  transfer: SimulatedTransfer;
  /**
   * The session after the transfer: `successful` for the exact amount, `mismatch` for another, once the bank's
   * notification was delivered (`transfer.notification === 'delivered'`, the usual case).
   */
  session: Session;
}
/**
 * What `events.resend` answers: the deliveries it queued.
 *
 * @example
 * import type { ResendEventResult } from '@servicepay/node';
 * const count = (result: ResendEventResult) => result.deliveries.length;
 */
export type ResendEventResult = Lenient<ContractResendEventResult>;
/**
 * What `webhookEndpoints.delete` answers.
 *
 * @example
 * import type { DeletedWebhookEndpoint } from '@servicepay/node';
 * const gone: DeletedWebhookEndpoint = { id: 'we_123', deleted: true };
 */
export type DeletedWebhookEndpoint = Lenient<ContractDeletedWebhookEndpoint>;
/**
 * A payer's credit no session could take, as `session.credit_unapplied` carries it.
 *
 * @example
 * import type { UnappliedCredit } from '@servicepay/node';
 * const refunded = (credit: UnappliedCredit) => credit.refundStatus === 'refunded';
 */
export type UnappliedCredit = Lenient<ContractUnappliedCredit>;

/**
 * A merchant's refund of (part of) a session: `pending`, then `succeeded` or `failed` (with `failureReason`).
 *
 * @example
 * import type { Refund } from '@servicepay/node';
 * const backWithPayer = (refund: Refund) => refund.status === 'succeeded';
 */
export type Refund = Lenient<ContractRefund>;

/**
 * A payment link (`pl_…`): a page (`url`) payers open to pay a fixed amount; `active` false once turned off or,
 * for a one-time link, once paid.
 *
 * @example
 * import type { PaymentLink } from '@servicepay/node';
 * const shareable = (link: PaymentLink) => link.active && link.url;
 */
export type PaymentLink = Lenient<ContractPaymentLink>;

type KnownEventBody = Omit<Lenient<ContractWebhookEvent>, 'type'>;

/**
 * A webhook event of a type this SDK version knows, discriminated by `type`.
 *
 * @example
 * import type { KnownWebhookEvent } from '@servicepay/node';
 * const reference = (event: KnownWebhookEvent) => event.data.session.reference;
 */
export type KnownWebhookEvent = { [T in WebhookEventType]: KnownEventBody & { type: T } }[WebhookEventType];

declare const unknownEventType: unique symbol;

/**
 * The `type` of an event this SDK version does not know. At run time it is the string the service sent
 * (`'session.refunded'`, say); the type system keeps it opaque so that comparing `event.type` with a known
 * type narrows the event, and a misspelt type fails to compile. Read it with `String(event.type)`.
 *
 * @example
 * import type { UnknownWebhookEvent } from '@servicepay/node';
 * const name = (event: UnknownWebhookEvent): string => String(event.type);
 */
export interface UnknownEventType {
  readonly [unknownEventType]: true;
  toString(): string;
}

/**
 * A signed event of a type added to the service after this SDK version: returned as it came, never thrown,
 * so an older integration keeps answering 2xx to newer events (and can log or ignore them).
 *
 * @example
 * import type { UnknownWebhookEvent } from '@servicepay/node';
 * const log = (event: UnknownWebhookEvent) => console.warn('unhandled event', String(event.type), event.id);
 */
export interface UnknownWebhookEvent {
  id: string;
  type: UnknownEventType;
  environment: Lenient<Environment>;
  createdAt: string;
  /** The event's data as sent; not checked beyond being an object. */
  data: Readonly<Record<string, unknown>>;
}

/**
 * Every event `constructEvent` returns: a known type (narrowed by `event.type`), or an unknown one.
 *
 * @example
 * import type { WebhookEvent } from '@servicepay/node';
 * function handle(event: WebhookEvent) {
 *   switch (event.type) {
 *     case 'session.successful':
 *       return event.data.session.reference; // typed: a known event
 *     default:
 *       return null; // includes events of types added later
 *   }
 * }
 */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;

/** The lenient readers of every response envelope the SDK receives. @internal */
export const Envelopes = {
  session: lenient(envelopeOf(SessionSchema)),
  createdSession: lenient(envelopeOf(CreatedSessionSchema)),
  sessionList: lenient(listEnvelopeOf(SessionSchema)),
  refund: lenient(envelopeOf(RefundSchema)),
  refundList: lenient(listEnvelopeOf(RefundSchema)),
  paymentLink: lenient(envelopeOf(PaymentLinkSchema)),
  paymentLinkList: lenient(listEnvelopeOf(PaymentLinkSchema)),
  endpoint: lenient(envelopeOf(WebhookEndpointSchema)),
  endpointWithSecret: lenient(envelopeOf(WebhookEndpointWithSecretSchema)),
  endpointList: lenient(listEnvelopeOf(WebhookEndpointSchema)),
  deletedEndpoint: lenient(envelopeOf(DeletedWebhookEndpointSchema)),
  deliveryList: lenient(listEnvelopeOf(WebhookDeliverySchema)),
  resendResult: lenient(envelopeOf(ResendEventResultSchema)),
  simulatedTransfer: lenient(envelopeOf(SimulatedTransferSchema)),
  testAccount: lenient(envelopeOf(TestAccountSchema)),
};

/** The lenient reader of a known event's body. @internal */
export const KnownEventSchema = lenient(WebhookEventSchema);
