import type { ErrorCode, FieldError } from './protocol/index.ts';

/**
 * Codes the SDK itself produces, beside the service's own {@link ErrorCode}s.
 * Like the service's codes, they are stable: branch on them, never on `message`.
 */
export type ClientErrorCode =
  /** No answer from the service: refused, reset, DNS failure. */
  | 'connection_error'
  /** No complete answer within `timeout`; for a download, no first byte, or no data for `timeout` while read. */
  | 'timeout'
  /** A download (an export) whose connection closed after its first byte and before its end: what came is incomplete. */
  | 'stream_interrupted'
  /** An export was asked for in a runtime without Node's streams (`node:stream`), before anything was sent. */
  | 'node_streams_unavailable'
  /** The service answered with a body the SDK cannot read (not the documented envelope). */
  | 'invalid_response'
  /** The service answered with a status and no code the SDK knows. */
  | 'unknown_error'
  /** `constructEvent` was handed a parsed object instead of the raw body. */
  | 'webhook_payload_not_raw'
  /** `constructEvent` was given no signing secret (or an empty one). */
  | 'webhook_secret_missing'
  /** No `X-Service-Signature` header, or one without `t=` and `v1=`. */
  | 'webhook_signature_missing'
  /** The header's timestamp is older or newer than the tolerance allows. */
  | 'webhook_timestamp_out_of_tolerance'
  /** No `v1=` signature matches any of the given secrets. */
  | 'webhook_signature_mismatch'
  /** `constructEventAsync` found no Web Crypto (`globalThis.crypto.subtle`) in this runtime. */
  | 'webhook_crypto_unavailable'
  /** `constructEvent` (synchronous) found no `node:crypto`: use `constructEventAsync` in this runtime. */
  | 'webhook_node_crypto_unavailable'
  /** The signature is good but the body is not JSON. */
  | 'webhook_payload_not_json'
  /** The signature is good but the body is not a webhook event (or not a valid one of a known type). */
  | 'webhook_payload_invalid';

/**
 * Every `code` an SDK error can carry. Codes the service adds later arrive as they are, so the type stays
 * open (`string & {}`) while keeping completion for the known ones.
 */
export type ServicePayErrorCode = ErrorCode | ClientErrorCode | (string & {});

/** What every SDK error is built from. */
export interface ServicePayErrorInit {
  message: string;
  code: ServicePayErrorCode;
  /** HTTP status of the response, or `null` when there was none (network failure, local check). */
  statusCode?: number | null;
  requestId?: string | null;
  errors?: readonly FieldError[];
  headers?: Readonly<Record<string, string>>;
  cause?: unknown;
}

/**
 * Base class of every error the SDK throws. Catch it to handle them all; branch on `code` (stable) or on
 * the subclass, never on `message` (reworded freely).
 *
 * @example
 * import { ServicePay, ServicePayError } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * try {
 *   await servicepay.sessions.retrieve('ses_missing');
 * } catch (error) {
 *   if (error instanceof ServicePayError) console.error(error.statusCode, error.code, error.requestId);
 * }
 */
export class ServicePayError extends Error {
  override readonly name: string = 'ServicePayError';
  /** Stable machine-readable code. */
  readonly code: ServicePayErrorCode;
  /** HTTP status, or `null` when no response came (network, timeout, local checks). */
  readonly statusCode: number | null;
  /** The service's request id, to quote to support; `null` when there was no response. */
  readonly requestId: string | null;
  /** Response headers, lower-cased; empty when there was no response. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: ServicePayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.statusCode = init.statusCode ?? null;
    this.requestId = init.requestId ?? null;
    this.headers = init.headers ?? {};
  }
}

/**
 * 401: the key is missing, malformed, revoked, or not a key at all (a client secret).
 *
 * @example
 * import { AuthenticationError, ServicePay } from '@servicepay/node';
 * try {
 *   await new ServicePay('sk_test_revoked0000000000000000000000').sessions.list();
 * } catch (error) {
 *   if (error instanceof AuthenticationError) console.error('check SERVICEPAY_SECRET_KEY:', error.code);
 * }
 */
export class AuthenticationError extends ServicePayError {
  override readonly name = 'AuthenticationError';
}

/**
 * 403: a valid key that may not do this: a publishable key, a live key without KYC, another business's
 * resource, a test-only helper with a live key.
 *
 * @example
 * import { PermissionError } from '@servicepay/node';
 * const isOthersSession = (error: unknown) => error instanceof PermissionError && error.code === 'forbidden';
 */
export class PermissionError extends ServicePayError {
  override readonly name = 'PermissionError';
}

/**
 * 404: no such resource (or route).
 *
 * @example
 * import { NotFoundError } from '@servicepay/node';
 * const isMissing = (error: unknown) => error instanceof NotFoundError;
 */
export class NotFoundError extends ServicePayError {
  override readonly name = 'NotFoundError';
}

/**
 * 409: the request conflicts with the resource's state, e.g. an `Idempotency-Key` reused with another body,
 * a reference already used, a session that is no longer active.
 *
 * @example
 * import { ConflictError } from '@servicepay/node';
 * const isReusedKey = (error: unknown) => error instanceof ConflictError && error.code === 'idempotency_key_reused';
 */
export class ConflictError extends ServicePayError {
  override readonly name = 'ConflictError';
}

/**
 * 400, 410, 413, 415, 422: the request itself is wrong. `errors` lists the invalid fields (dotted paths).
 *
 * @example
 * import { InvalidRequestError } from '@servicepay/node';
 * const fieldsOf = (error: unknown) => (error instanceof InvalidRequestError ? error.errors.map((e) => e.path) : []);
 */
export class InvalidRequestError extends ServicePayError {
  override readonly name = 'InvalidRequestError';
  /** The invalid fields: `{ path: 'payer.email', message }`. Empty when the service named none. */
  readonly errors: readonly FieldError[];

  constructor(init: ServicePayErrorInit) {
    super(init);
    this.errors = init.errors ?? [];
  }
}

/**
 * 429: too many requests. The SDK already retried, honouring `Retry-After` up to `maxRetries` times, unless
 * the service asked for a wait longer than `maxRetryAfter` (5 s by default): then it is thrown at once.
 * `retryAfter` says how many seconds the service asked to wait.
 *
 * @example
 * import { RateLimitError } from '@servicepay/node';
 * const waitSeconds = (error: unknown) => (error instanceof RateLimitError ? (error.retryAfter ?? 1) : 0);
 */
export class RateLimitError extends ServicePayError {
  override readonly name = 'RateLimitError';
  /** Seconds to wait before trying again, from `Retry-After`; `null` when the service did not say. */
  readonly retryAfter: number | null;

  constructor(init: ServicePayErrorInit & { retryAfter?: number | null }) {
    super(init);
    this.retryAfter = init.retryAfter ?? null;
  }
}

/**
 * Any other status, 5xx included (after the SDK's retries), or a response the SDK cannot read.
 *
 * @example
 * import { APIError } from '@servicepay/node';
 * const isServiceFault = (error: unknown) => error instanceof APIError && (error.statusCode ?? 0) >= 500;
 */
export class APIError extends ServicePayError {
  override readonly name = 'APIError';
}

/**
 * No response: connection refused or reset, DNS failure. Retried up to `maxRetries` before it is thrown.
 * `cause` holds the network error. Also a download (an export) cut off after its first byte and before its
 * end (`code: 'stream_interrupted'`, emitted as the stream's `error`, never retried): what came is incomplete.
 *
 * @example
 * import { ConnectionError } from '@servicepay/node';
 * const isNetwork = (error: unknown) => error instanceof ConnectionError;
 */
export class ConnectionError extends ServicePayError {
  override readonly name: string = 'ConnectionError';
}

/**
 * No complete response within `timeout` milliseconds (per attempt). Retried up to `maxRetries` before it is
 * thrown; a POST keeps its `Idempotency-Key`, so a retry never creates a second session.
 *
 * @example
 * import { TimeoutError } from '@servicepay/node';
 * const isTimeout = (error: unknown) => error instanceof TimeoutError && error.code === 'timeout';
 */
export class TimeoutError extends ConnectionError {
  override readonly name = 'TimeoutError';
}

/**
 * A webhook could not be verified: not the raw body, no or malformed signature header, a timestamp out of
 * tolerance, no matching signature, or (as its subclass {@link WebhookPayloadError}) a signed body that is not
 * an event. Answer such a request with 400 and do not process it.
 *
 * @example
 * import { SignatureVerificationError } from '@servicepay/node';
 * const statusFor = (error: unknown) => (error instanceof SignatureVerificationError ? 400 : 500);
 */
export class SignatureVerificationError extends ServicePayError {
  override readonly name: string = 'SignatureVerificationError';
}

/**
 * A webhook whose signature is good but whose body is not an event: not JSON (`webhook_payload_not_json`) or
 * not an event's shape (`webhook_payload_invalid`). A {@link SignatureVerificationError}, so a handler that
 * answers 400 to those answers 400 here too: the body cannot be processed, and it is not the receiver's fault.
 * An event of a type this SDK does not know is not an error: it is returned as an `UnknownWebhookEvent`.
 *
 * @example
 * import { WebhookPayloadError } from '@servicepay/node';
 * const isBadBody = (error: unknown) => error instanceof WebhookPayloadError && error.code === 'webhook_payload_not_json';
 */
export class WebhookPayloadError extends SignatureVerificationError {
  override readonly name = 'WebhookPayloadError';
}
