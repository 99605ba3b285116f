import { z } from 'zod';
import { EnvironmentSchema, PageParamsSchema, TimestampSchema } from './common.ts';
import { SessionSchema } from './sessions.ts';

/**
 * The events a merchant can subscribe to: every terminal outcome of a session, mismatches, and a payer's
 * credit the session could not take (`session.credit_unapplied`: recorded and refunded through the bank).
 */
export const WebhookEventTypeSchema = z.enum([
  'session.successful',
  'session.mismatch',
  'session.expired',
  'session.cancelled',
  'session.credit_unapplied',
]);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/** Why a credit the bank made could not be applied to its session. */
export const UnappliedReasonSchema = z.enum([
  'session_ended',
  'account_closed',
  'currency_mismatch',
  'amount_mismatch',
  'unknown_account',
]);
export type UnappliedReason = z.infer<typeof UnappliedReasonSchema>;

/**
 * A payer's money the bank credited that no session could take (it arrived after the session ended, to a
 * closed account, in another currency…). `refundStatus` `refunded`: the bank sent it back to the payer
 * (`refundId` is the bank's); `refund_refused`: the bank holds no such credit, so nothing was sent;
 * `refund_pending`: recorded, the bank's answer not in yet (an operator's list can show it; the
 * `session.credit_unapplied` webhook is sent once the bank answered, so it never carries it).
 */
export const UnappliedCreditSchema = z.object({
  id: z.string().regex(/^crd_[0-9A-Za-z]+$/),
  transferId: z.string(),
  accountNumber: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  reason: UnappliedReasonSchema,
  refundStatus: z.enum(['refund_pending', 'refunded', 'refund_refused']),
  refundId: z.string().nullable(),
  createdAt: TimestampSchema,
});
export type UnappliedCredit = z.infer<typeof UnappliedCreditSchema>;

/**
 * Body of every webhook POST, signed with `X-Service-Signature: t=<unix>,v1=<hex hmac>`. `data.credit` is
 * present on `session.credit_unapplied` only.
 */
export const WebhookEventSchema = z.object({
  id: z.string().regex(/^evt_[0-9A-Za-z]+$/),
  type: WebhookEventTypeSchema,
  environment: EnvironmentSchema,
  createdAt: TimestampSchema,
  data: z.object({ session: SessionSchema, credit: UnappliedCreditSchema.optional() }),
});
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

/** The longest webhook URL, as sent and once normalised. */
const MAX_WEBHOOK_URL = 2048;

/**
 * A webhook URL holds none of these: C0 and C1 control characters (with DEL), and the bidirectional controls
 * (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) that make text read otherwise than it is.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it refuses
const WITHOUT_CONTROLS = /^[^\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*$/u;

/** `http://` or `https://`, in any case (written out: a JSON Schema `pattern` carries no flags). */
const HTTP_SCHEME = /^[Hh][Tt][Tt][Pp][Ss]?:\/\//;

/**
 * A webhook URL as the service stores and answers it: `raw` parsed by the WHATWG URL Standard (`new URL`, what
 * browsers, Node and undici use) and written back as its `href`, or undefined when the service refuses it (a
 * control or bidirectional character, not `http(s)://`, not parseable, over 2048 characters once normalised).
 *
 * @example
 * normalizeWebhookUrl('HTTP://Shop.Example/a b?q=<x>'); // 'http://shop.example/a%20b?q=%3Cx%3E'
 * normalizeWebhookUrl('https://shop.example/\u202Egpj.exe'); // undefined
 */
export function normalizeWebhookUrl(raw: string): string | undefined {
  if (!WITHOUT_CONTROLS.test(raw) || !HTTP_SCHEME.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  return url.href.length <= MAX_WEBHOOK_URL ? url.href : undefined;
}

/**
 * The one rule for a webhook URL, for `POST /api/webhooks`, `PATCH /api/webhooks/{id}` and the portal's form:
 * at most 2048 characters, no control or bidirectional character, `http://` or `https://`, parsed by the WHATWG
 * URL Standard; the parsed value is its normalised `href` (spaces and markup percent-encoded, the host in
 * lower case, a path of at least `/`), which is what is stored and answered. Which addresses a URL may reach
 * (https only for live, no private ranges, …) is the service's check after this one.
 */
const WebhookUrlSchema = z
  .string()
  .max(MAX_WEBHOOK_URL)
  .regex(WITHOUT_CONTROLS, {
    error: 'must not contain control characters (U+0000–U+001F, U+007F–U+009F) or bidirectional controls',
  })
  .regex(HTTP_SCHEME, { error: 'must be an absolute URL starting with http:// or https://' })
  .meta({
    description:
      'An absolute `http://` or `https://` URL, at most 2048 characters, with no C0 or C1 control character (U+0000–U+001F, U+007F–U+009F) and no bidirectional control (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). It must parse by the WHATWG URL Standard (`new URL`), and is stored and answered in the normalised form that parser writes (`href`: spaces and markup percent-encoded, host in lower case). Not an RFC 3986 `uri`: a space in the path, for one, is accepted and stored as `%20`. Live endpoints must use https, and no endpoint may reach a private, loopback (live) or otherwise special address.',
  })
  .transform((raw, context) => {
    const href = normalizeWebhookUrl(raw);
    if (href === undefined) {
      context.issues.push({
        code: 'custom',
        message: 'must be a URL the WHATWG URL Standard parses, at most 2048 characters once normalised',
        input: raw,
      });
      return z.NEVER;
    }
    return href;
  });

/** Body of `POST /api/webhooks`. `events` defaults to every type. */
export const CreateWebhookEndpointParamsSchema = z.strictObject({
  url: WebhookUrlSchema,
  events: z.array(WebhookEventTypeSchema).min(1).optional(),
  description: z.string().max(500).optional(),
});
export type CreateWebhookEndpointParams = z.infer<typeof CreateWebhookEndpointParamsSchema>;

/** Body of `PATCH /api/webhooks/{id}`. Enabling a disabled endpoint resets its failure count. */
export const UpdateWebhookEndpointParamsSchema = z.strictObject({
  url: WebhookUrlSchema.optional(),
  events: z.array(WebhookEventTypeSchema).min(1).optional(),
  description: z.string().max(500).optional(),
  enabled: z.boolean().optional(),
});
export type UpdateWebhookEndpointParams = z.infer<typeof UpdateWebhookEndpointParamsSchema>;

export const WebhookEndpointSchema = z.object({
  id: z.string().regex(/^we_[0-9A-Za-z]+$/),
  url: z.string(),
  events: z.array(WebhookEventTypeSchema),
  description: z.string().nullable(),
  enabled: z.boolean(),
  /** Why the service turned the endpoint off (`failing`), or null. */
  disabledReason: z.string().nullable(),
  environment: EnvironmentSchema,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

/** Creation and secret rolling return the signing secret, this once. */
export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().regex(/^whsec_[0-9A-Za-z]+$/),
});
export type WebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecretSchema>;

/**
 * Query of `GET /api/webhooks`. `url` keeps only the endpoints registered at this URL, compared in the
 * normalised form endpoints are stored in (`normalizeWebhookUrl`; a value that is no webhook URL matches
 * none): how an app that registers its endpoint at every start finds the one it made, however it spells it.
 */
export const ListWebhookEndpointsParamsSchema = PageParamsSchema.extend({
  environment: EnvironmentSchema.optional(),
  url: z
    .string()
    .min(1)
    .max(MAX_WEBHOOK_URL)
    .transform((raw) => normalizeWebhookUrl(raw) ?? raw)
    .optional(),
});
export type ListWebhookEndpointsParams = z.input<typeof ListWebhookEndpointsParamsSchema>;

export const WebhookAttemptSchema = z.object({
  at: TimestampSchema,
  /** The receiver's HTTP status, or null when no answer came (refused, timed out). */
  statusCode: z.number().int().nullable(),
  latencyMs: z.number().int(),
  error: z.string().nullable(),
  /**
   * The first kilobyte of the receiver's answer (secrets masked), for debugging; null when it answered nothing,
   * or when the answer is withheld (see `responseExcerptWithheld`).
   */
  responseExcerpt: z.string().nullable(),
  /**
   * Why `responseExcerpt` is null although the receiver answered: `receiver_not_public` (a loopback or private
   * address: only status and timing are shown) or `receiver_not_checked` (recorded before answers were checked,
   * cleared by a migration). Treat any other string as withheld too. Null otherwise; absent from servers older
   * than this field.
   */
  responseExcerptWithheld: z.string().nullable().optional(),
});
export type WebhookAttempt = z.infer<typeof WebhookAttemptSchema>;

export const WebhookDeliveryStatusSchema = z.enum(['pending', 'succeeded', 'failed']);
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatusSchema>;

/** One event on its way to one endpoint, with every attempt made. */
export const WebhookDeliverySchema = z.object({
  id: z.string().regex(/^wd_[0-9A-Za-z]+$/),
  endpointId: z.string(),
  eventId: z.string(),
  eventType: WebhookEventTypeSchema,
  status: WebhookDeliveryStatusSchema,
  attemptCount: z.number().int(),
  nextAttemptAt: TimestampSchema.nullable(),
  attempts: z.array(WebhookAttemptSchema),
  createdAt: TimestampSchema,
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const ListWebhookDeliveriesParamsSchema = PageParamsSchema.extend({
  eventId: z.string().optional(),
  status: WebhookDeliveryStatusSchema.optional(),
});
export type ListWebhookDeliveriesParams = z.input<typeof ListWebhookDeliveriesParamsSchema>;

/** Body of `POST /api/events/{id}/resend`: one endpoint, or every endpoint that subscribes to the event. */
export const ResendEventParamsSchema = z.strictObject({ endpointId: z.string().optional() });
export type ResendEventParams = z.infer<typeof ResendEventParamsSchema>;

/** `data` of `DELETE /api/webhooks/{id}`. */
export const DeletedWebhookEndpointSchema = z.object({ id: z.string(), deleted: z.literal(true) });
export type DeletedWebhookEndpoint = z.infer<typeof DeletedWebhookEndpointSchema>;

/** `data` of the 202 to `POST /api/events/{id}/resend`: the deliveries queued, one per endpoint. */
export const ResendEventResultSchema = z.object({ eventId: z.string(), deliveries: z.array(z.string()) });
export type ResendEventResult = z.infer<typeof ResendEventResultSchema>;
