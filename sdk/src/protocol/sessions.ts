import { z } from 'zod';
import { EnvironmentSchema, PageParamsSchema, TimestampSchema } from './common.ts';

/**
 * Where a payment session stands on the service.
 * pending → awaiting_payment → successful | mismatch | expired | cancelled;
 * mismatch still accepts the exact amount; awaiting_payment falls back to pending when its account runs out.
 */
export const SessionStatusSchema = z.enum([
  'pending',
  'awaiting_payment',
  'mismatch',
  'successful',
  'expired',
  'cancelled',
]);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

/** Statuses a session never leaves. */
export const TERMINAL_SESSION_STATUSES: readonly SessionStatus[] = ['successful', 'expired', 'cancelled'];

/** A UTF-16 surrogate with no partner: JSON can spell one (`"\ud800"`), UTF-8 cannot store it. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * A string that is well-formed Unicode. A lone surrogate would be stored as U+FFFD, altered without a word,
 * so it is refused (400 `validation_failed` naming the field) instead.
 */
export const wellFormedString = () =>
  z.string().refine((value) => !LONE_SURROGATE.test(value), 'must not contain a lone UTF-16 surrogate');

export const PayerSchema = z.strictObject({
  name: wellFormedString().trim().min(1).max(200),
  email: z.email().max(254),
  phone: z
    .string()
    .regex(/^\+?[0-9][0-9 ()-]{5,19}$/, 'phone must be digits, optionally with a leading +')
    .optional(),
});
export type Payer = z.infer<typeof PayerSchema>;

/** Merchant-defined key/value pairs kept with the session: at most 20 keys, keys ≤ 40, values ≤ 500 characters. */
export const MetadataSchema = z
  .record(wellFormedString().min(1).max(40), wellFormedString().max(500))
  .refine((value) => Object.keys(value).length <= 20, 'metadata holds at most 20 keys');
export type Metadata = z.infer<typeof MetadataSchema>;

/** A merchant's own payment reference: unique per business and environment. */
export const ReferenceSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_\-.:/#]+$/, 'reference may hold letters, digits and _ - . : / #');

/**
 * Where the hosted checkout sends the payer back (`successUrl`, `cancelUrl`): an absolute `https://` URL, at
 * most 2,048 characters, with no credentials in it. `http://` is taken only for a loopback host
 * (`127.0.0.1`, `[::1]`, `localhost`) and only in the test environment (the service checks that part, since it
 * depends on the key). `{SESSION_ID}` anywhere in it is replaced by the session's id when the payer is sent.
 */
export const RedirectUrlSchema = z
  .string()
  .max(2048)
  // Parsed as browsers parse it (WHATWG), not as an RFC 3986 `uri`: `{SESSION_ID}` is not valid there.
  .refine((value) => {
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  }, 'must be an absolute http(s) URL')
  .refine((value) => {
    if (!URL.canParse(value)) return true;
    const url = new URL(value);
    return url.username === '' && url.password === '';
  }, 'must not carry a user name or password')
  .meta({
    description:
      'An absolute https URL (http only for a loopback host with a test key); `{SESSION_ID}` is replaced by the session id.',
  });

/**
 * Body of `POST /api/widget/sessions`. Amount in the currency's minor unit (kobo, cents).
 * Unknown fields are refused, so a typo never silently drops a value.
 */
export const CreateSessionParamsSchema = z.strictObject({
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[A-Z]{3}$/, 'currency is an upper-case ISO 4217 code'),
  payer: PayerSchema,
  reference: ReferenceSchema.optional(),
  metadata: MetadataSchema.optional(),
  expiresInMinutes: z.number().int().min(5).max(1440).optional(),
  /** The hosted checkout (`url`) sends the payer here after SUCCESS, `{SESSION_ID}` filled in. */
  successUrl: RedirectUrlSchema.optional(),
  /** The hosted checkout sends the payer here after a cancel or the session's expiry. */
  cancelUrl: RedirectUrlSchema.optional(),
});
export type CreateSessionParams = z.infer<typeof CreateSessionParamsSchema>;

/** The one-time bank account the payer transfers to. Accepts only the exact session amount. */
export const VirtualAccountSchema = z.object({
  bankName: z.string(),
  accountNumber: z.string().regex(/^\d{10}$/),
  accountName: z.string(),
  expiresAt: TimestampSchema,
});
export type VirtualAccount = z.infer<typeof VirtualAccountSchema>;

/** What the last transfer of the wrong amount was, for the MISMATCH screen and the merchant. */
export const MismatchSchema = z.object({
  expectedAmount: z.number().int(),
  receivedAmount: z.number().int(),
});
export type Mismatch = z.infer<typeof MismatchSchema>;

/** A payment session as the merchant's backend sees it (secret key). */
export const SessionSchema = z.object({
  id: z.string(),
  reference: z.string(),
  status: SessionStatusSchema,
  environment: EnvironmentSchema,
  amount: z.number().int(),
  currency: z.string(),
  payer: z.object({ name: z.string(), email: z.string(), phone: z.string().optional() }),
  metadata: z.record(z.string(), z.string()),
  virtualAccount: VirtualAccountSchema.nullable(),
  lastMismatch: MismatchSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  expiresAt: TimestampSchema,
  paidAt: TimestampSchema.nullable(),
  /**
   * What the session's refunds hold, in minor units: pending and succeeded ones (a failed refund's amount is
   * refundable again). `amount - amountRefunded` is what is left to refund. Always sent now; absent (read it
   * as 0) only from events recorded before refunds existed, which a resend delivers as they were.
   */
  amountRefunded: z.number().int().optional(),
  /**
   * The payment link (`pl_…`) the session was made through, or null. Absent (read it as null) from events
   * recorded before payment links existed.
   */
  paymentLink: z.string().nullable().optional(),
  /** Where the hosted checkout sends the payer after SUCCESS (null: a page of the service says so). */
  successUrl: z.string().nullable().optional(),
  /** Where the hosted checkout sends the payer after a cancel or expiry (null: a page of the service). */
  cancelUrl: z.string().nullable().optional(),
});
export type Session = z.infer<typeof SessionSchema>;

/**
 * The creation response adds the client secret and the hosted checkout's `url`, both shown this once: the
 * `url` is a page on the widget host of the session's environment whose fragment (`#…`, never sent to a
 * server) carries the client secret, so it opens the checkout once, like the secret itself.
 */
export const CreatedSessionSchema = SessionSchema.extend({
  clientSecret: z.string().regex(/^cs_(test|live)_[0-9A-Za-z]+$/),
  url: z.string(),
});
export type CreatedSession = z.infer<typeof CreatedSessionSchema>;

/** Query of `GET /api/widget/sessions`. */
export const ListSessionsParamsSchema = PageParamsSchema.extend({
  environment: EnvironmentSchema.optional(),
  status: SessionStatusSchema.optional(),
  reference: z.string().min(1).max(100).optional(),
  /** Only the sessions made through this payment link. */
  paymentLink: z
    .string()
    .regex(/^pl_[0-9A-Za-z]{1,60}$/, 'paymentLink is a payment link id (pl_…)')
    .optional(),
});
export type ListSessionsParams = z.input<typeof ListSessionsParamsSchema>;

/** What the payer's browser may know of a session: no payer details, no metadata. */
export const PublicSessionSchema = z.object({
  id: z.string(),
  reference: z.string(),
  status: SessionStatusSchema,
  environment: EnvironmentSchema,
  amount: z.number().int(),
  currency: z.string(),
  merchantName: z.string(),
  expiresAt: TimestampSchema,
});
export type PublicSession = z.infer<typeof PublicSessionSchema>;

/** Body of `POST /api/widget/bootstrap`: the widget's one exchange of the client secret. */
export const BootstrapParamsSchema = z.strictObject({ clientSecret: z.string().min(1).max(200) });
export type BootstrapParams = z.infer<typeof BootstrapParamsSchema>;

/** The widget token authorises the widget's later calls (push stream, new account, cancel) for this session. */
export const BootstrapResultSchema = z.object({
  token: z.string().regex(/^wt_[0-9A-Za-z]+$/),
  session: PublicSessionSchema,
  virtualAccount: VirtualAccountSchema,
});
export type BootstrapResult = z.infer<typeof BootstrapResultSchema>;

/** Result of `POST /api/widget/sessions/{id}/accounts`: a fresh account after the previous one ran out. */
export const NewAccountResultSchema = z.object({
  session: PublicSessionSchema,
  virtualAccount: VirtualAccountSchema,
});
export type NewAccountResult = z.infer<typeof NewAccountResultSchema>;

/**
 * `data` of `POST /api/widget/sessions/{id}/cancel`: the merchant's `Session` to its secret key; to the payer's
 * widget token, the `PublicSession`, like every answer a widget token gets (no payer details, no metadata:
 * they never reach the browser).
 */
export const CancelledSessionSchema = z.union([SessionSchema, PublicSessionSchema]);
export type CancelledSession = z.infer<typeof CancelledSessionSchema>;

/**
 * A currency the service takes, with the amounts it takes in it (minor units, both ends included). A session
 * in any other currency, or for an amount outside these, is refused at creation (`unsupported_currency`,
 * `amount_out_of_range`).
 */
export const AcceptedCurrencySchema = z.object({
  currency: z.string(),
  minAmount: z.number().int(),
  maxAmount: z.number().int(),
});
export type AcceptedCurrency = z.infer<typeof AcceptedCurrencySchema>;

/**
 * The business's public checkout profile, readable with a publishable key: its name, the key's environment,
 * and the currencies the service takes (so a shop can offer bank transfer only where it works).
 */
export const CheckoutProfileSchema = z.object({
  merchantName: z.string(),
  environment: EnvironmentSchema,
  currencies: z.array(AcceptedCurrencySchema),
});
export type CheckoutProfile = z.infer<typeof CheckoutProfileSchema>;
