import { z } from 'zod';

/** The two worlds a key, a session and a webhook endpoint live in. Test moves no real money. */
export const EnvironmentSchema = z.enum(['test', 'live']);
export type Environment = z.infer<typeof EnvironmentSchema>;

/**
 * Stable machine-readable error codes, each one the service sends (a code it never sends has no place here).
 * Messages may be reworded; codes never change meaning. Clients branch on `code`, people read `message`.
 */
export const ErrorCodeSchema = z.enum([
  // 401
  'authentication_required',
  'invalid_api_key',
  'api_key_revoked',
  'client_secret_not_a_credential',
  'invalid_widget_token',
  'widget_token_expired',
  'invalid_signature',
  // 403
  'publishable_key_not_allowed',
  'kyc_required',
  'environment_mismatch',
  'forbidden',
  'test_mode_only',
  // 400
  'bad_request',
  'malformed_json',
  'validation_failed',
  'unsupported_currency',
  'amount_out_of_range',
  'invalid_client_secret',
  'webhook_endpoint_limit_reached',
  'refund_exceeds_remaining',
  // 404
  'not_found',
  'route_not_found',
  // 405, 408
  'method_not_allowed',
  'request_timeout',
  // 409
  'idempotency_key_reused',
  'reference_already_used',
  'client_secret_already_used',
  'session_not_active',
  'no_open_account',
  'session_not_refundable',
  'session_fully_refunded',
  'payment_link_completed',
  // 410
  'client_secret_expired',
  'payment_link_inactive',
  // 413, 415, 417, 429
  'payload_too_large',
  'unsupported_media_type',
  'expectation_failed',
  'rate_limited',
  // 5xx: the service's own fault, never the client's input
  'internal_error',
  'service_unavailable',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** `meta` of every response: the HTTP status again, a short text, and for errors a stable code. */
export const MetaSchema = z.object({
  statusCode: z.number().int(),
  message: z.string(),
  code: ErrorCodeSchema.optional(),
  requestId: z.string().optional(),
});
export type Meta = z.infer<typeof MetaSchema>;

/**
 * One invalid field of a request: `path` is dotted (`payer.email`); for an unknown field it names that field
 * (`payer.nickname`); empty only when the body itself is wrong (an array where an object belongs).
 */
export const FieldErrorSchema = z.object({ path: z.string(), message: z.string() });
export type FieldError = z.infer<typeof FieldErrorSchema>;

/** The body of every error response (spec §7): `{ meta: { statusCode, message } }`, never a stack trace. */
export const ErrorBodySchema = z.object({
  meta: MetaSchema.extend({ code: ErrorCodeSchema }),
  errors: z.array(FieldErrorSchema).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Cursor pagination of list responses, newest first. Pass `nextCursor` as `startingAfter`. */
export const PaginationSchema = z.object({ hasMore: z.boolean(), nextCursor: z.string().nullable() });
export type Pagination = z.infer<typeof PaginationSchema>;

/** `{ meta, data }`: the envelope of every successful response. */
export const envelopeOf = <T extends z.ZodType>(data: T) => z.object({ meta: MetaSchema, data });

/** `{ meta, data: [...], pagination }`: the envelope of every list. */
export const listEnvelopeOf = <T extends z.ZodType>(item: T) =>
  z.object({ meta: MetaSchema, data: z.array(item), pagination: PaginationSchema });

/** ISO 8601 timestamp in UTC with milliseconds, as the service writes every time. */
export const TimestampSchema = z.iso.datetime();

/** Query of every list: page size and the cursor from the previous page's `nextCursor`. */
export const PageParamsSchema = z.object({
  // `<number>` types the input as a number for callers; query strings still coerce on the server.
  limit: z.coerce.number<number>().int().min(1).max(100).default(20),
  startingAfter: z.string().min(1).max(64).optional(),
});
