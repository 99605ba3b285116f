import type {
  WebhookEvent as ContractWebhookEvent,
  Environment,
  Refund,
  Session,
  UnappliedCredit,
  WebhookEventType,
} from './protocol/index.ts';

/**
 * What {@link generateTestEvent} builds: the event's type, and any field you want to hold a value of your own
 * (the session's `reference` your order lookup reads, its `amount`, …). Everything else gets a value the
 * service could have sent.
 *
 * @example
 * import type { GenerateTestEventOptions } from '@servicepay/node';
 * const options: GenerateTestEventOptions = { type: 'session.successful', session: { reference: 'order-1042' } };
 */
export interface GenerateTestEventOptions<T extends WebhookEventType = WebhookEventType> {
  /** The event type, e.g. `'session.successful'`. */
  type: T;
  /** Fields of `data.session` to set; the status (and `paidAt`, `lastMismatch`) follow from the type unless given. */
  session?: Partial<Session>;
  /** Fields of `data.credit` to set (`session.credit_unapplied` only). */
  credit?: Partial<UnappliedCredit>;
  /** Fields of `data.refund` to set (`refund.succeeded` and `refund.failed` only). */
  refund?: Partial<Refund>;
  /** Default: a new `evt_…`. */
  id?: string;
  /** Default: the session's environment, else `'test'`. */
  environment?: Environment;
  /** ISO 8601. Default: now. */
  createdAt?: string;
}

/** A test event of one known type, as `constructEvent` returns it for the real one. */
export type TestEvent<T extends WebhookEventType = WebhookEventType> = ContractWebhookEvent & { type: T };

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `prefix` + 24 random base62 characters, the shape of the service's ids (Web Crypto: edge runtimes too). */
const testId = (prefix: string): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let id = prefix;
  for (const byte of bytes) id += BASE62[byte % 62];
  return id;
};

const digits = (count: number): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(count));
  return Array.from(bytes, (byte) => String(byte % 10)).join('');
};

/** The session status each event type is sent with (`credit_unapplied`: a credit that came after the end). */
const STATUS_OF: Record<WebhookEventType, Session['status']> = {
  'session.successful': 'successful',
  'session.mismatch': 'mismatch',
  'session.expired': 'expired',
  'session.cancelled': 'cancelled',
  'session.credit_unapplied': 'expired',
  'refund.succeeded': 'successful',
  'refund.failed': 'successful',
};

/**
 * Builds a webhook event of any known type, shaped exactly as the service sends it (it passes the contract's
 * `WebhookEventSchema`), for tests of your webhook handler that need no server: the fixture stripe-node's users
 * get from `stripe trigger`. Sign it with {@link generateTestWebhook} (or `generateTestHeader`) and send it to
 * your handler, or pass it to the code your handler calls.
 *
 * @example
 * import { generateTestEvent } from '@servicepay/node';
 * const event = generateTestEvent({ type: 'session.successful', session: { reference: 'order-1042', amount: 500_000 } });
 * event.data.session.status; // 'successful'
 */
export function generateTestEvent<T extends WebhookEventType>(
  options: GenerateTestEventOptions<T>,
): TestEvent<T> {
  const { type } = options;
  const status = STATUS_OF[type];
  if (status === undefined) {
    throw new TypeError(
      `generateTestEvent: unknown event type ${JSON.stringify(type)}; one of ${Object.keys(STATUS_OF).join(', ')}`,
    );
  }
  const now = new Date();
  const createdAt = options.createdAt ?? now.toISOString();
  const started = new Date(Date.parse(createdAt) - 5 * 60_000).toISOString();
  const environment = options.environment ?? options.session?.environment ?? 'test';
  const amount = options.session?.amount ?? 500_000;
  const accountExpiresAt = new Date(Date.parse(started) + 30 * 60_000).toISOString();
  const session: Session = {
    id: testId('ses_'),
    reference: `order-${digits(6)}`,
    status,
    environment,
    amount,
    currency: 'NGN',
    payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    metadata: {},
    virtualAccount: {
      bankName: 'ServicePay Test Bank',
      accountNumber: digits(10),
      accountName: 'ServicePay checkout',
      expiresAt: accountExpiresAt,
    },
    lastMismatch: status === 'mismatch' ? { expectedAmount: amount, receivedAmount: amount - 1_000 } : null,
    createdAt: started,
    updatedAt: createdAt,
    expiresAt: new Date(Date.parse(started) + 120 * 60_000).toISOString(),
    paidAt: status === 'successful' ? createdAt : null,
    amountRefunded: type === 'refund.succeeded' ? amount : 0,
    // A session made by the API, not through a payment link or for the hosted checkout (issue 36).
    paymentLink: null,
    successUrl: null,
    cancelUrl: null,
    ...options.session,
  };
  const event: ContractWebhookEvent = {
    id: options.id ?? testId('evt_'),
    type,
    environment,
    createdAt,
    data: { session },
  };
  if (type === 'session.credit_unapplied') {
    event.data.credit = {
      id: testId('crd_'),
      transferId: testId('trf_'),
      accountNumber: session.virtualAccount?.accountNumber ?? digits(10),
      amount: session.amount,
      currency: session.currency,
      reason: 'session_ended',
      refundStatus: 'refunded',
      refundId: testId('rfd_'),
      createdAt,
      ...options.credit,
    };
  }
  if (type === 'refund.succeeded' || type === 'refund.failed') {
    event.data.refund = {
      id: testId('rfd_'),
      sessionId: session.id,
      environment,
      amount: session.amount,
      currency: session.currency,
      status: type === 'refund.succeeded' ? 'succeeded' : 'failed',
      reason: 'requested_by_customer',
      failureReason: type === 'refund.failed' ? 'payer_account_closed' : null,
      createdAt,
      updatedAt: createdAt,
      ...options.refund,
    };
  }
  return event as TestEvent<T>;
}
