import { ZodError } from 'zod';
import { databaseUnavailable, storageFull } from '../db/database-errors.ts';
import { HttpError, storageFullError } from '../errors.ts';
import { asHttpError } from './domain-error-status.ts';

/**
 * Zod's issues as field errors with dotted paths (`payer.email`). An unknown field is named by its own path
 * (`payer.nickname`), one error per field: zod reports them as one issue on the object that holds them.
 *
 * @example
 * throw validationError(parsed.error, 'session'); // 400 validation_failed "The session has invalid fields."
 */
export function validationError(error: ZodError, what = 'request'): HttpError {
  const fieldErrors = error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: [...issue.path, key].map(String).join('.'),
          message: 'unknown field',
        }))
      : [{ path: issue.path.map(String).join('.'), message: issue.message }],
  );
  return new HttpError(400, 'validation_failed', `The ${what} has invalid fields.`, fieldErrors);
}

/** How an edge words the refusals the classifier makes up (the API speaks to programs, the portal to people). */
export interface ErrorWords {
  /** A body over its limit (413). */
  tooLarge: string;
  /** A body of another type (415). */
  wrongType: string;
  /** A body that could not be parsed. */
  unreadable: string;
  /** A write that found the disk full (503). */
  storageFull: string;
  /** The database does not answer (503). */
  databaseUnavailable: string;
}

/** The API's words (its clients retry with the same `Idempotency-Key`). */
export const API_WORDS: ErrorWords = {
  tooLarge: 'The request body is too large.',
  wrongType: 'The body must be UTF-8 JSON.',
  unreadable: 'The request body is not valid JSON.',
  storageFull: storageFullError().message,
  databaseUnavailable:
    'The service cannot reach its database right now. Retry shortly (with the same Idempotency-Key for a POST).',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
};

/** What anything raised is answered with, and whether it is the service's fault to log (and how loud). */
export interface Classified {
  error: HttpError;
  /** Absent for a client's fault. `warn`: an outage (full disk, no database); `error`: a fault of ours. */
  fault?: { level: 'warn' | 'error'; kind: 'storage-full' | 'database-unavailable' | 'internal' };
}

/**
 * The one classifier of errors, for every edge (JSON and HTML): a client's fault is its 4xx `HttpError` (a
 * service's `DomainError` by its reason, a `ZodError` as `validation_failed`, body-parser's and the router's
 * 4xx by their status); a full disk or an unreachable database is 503 `service_unavailable` with
 * `Retry-After` (nothing the client sent is at fault, and a retry may well succeed); anything else is 500
 * `internal_error`, without details.
 *
 * @example
 * const { error, fault } = classifyError(raised);
 * if (fault) logger[fault.level]('…'); sendError(res, error);
 */
export function classifyError(raised: unknown, words: ErrorWords = API_WORDS): Classified {
  const known = asHttpError(raised);
  if (known instanceof HttpError) return { error: known };
  if (known instanceof ZodError) return { error: validationError(known) };
  const fault = known as { status?: unknown; statusCode?: unknown; type?: unknown };
  const status = typeof fault.status === 'number' ? fault.status : fault.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return { error: new HttpError(413, 'payload_too_large', words.tooLarge) };
    if (status === 415) return { error: new HttpError(415, 'unsupported_media_type', words.wrongType) };
    if (fault.type === 'entity.parse.failed')
      return { error: new HttpError(400, 'malformed_json', words.unreadable) };
    return { error: new HttpError(status, 'bad_request', STATUS_TEXT[status] ?? 'Bad Request') };
  }
  // Before the outage check, which takes any errno-like code (ENOSPC too) for a lost connection.
  if (storageFull(known))
    return { error: storageFullError(words.storageFull), fault: { level: 'warn', kind: 'storage-full' } };
  if (databaseUnavailable(known)) {
    // A write whose COMMIT got no answer may have taken effect: the client's retry with the same
    // Idempotency-Key finds out.
    const error = new HttpError(503, 'service_unavailable', words.databaseUnavailable, undefined, {
      'Retry-After': '1',
    });
    return { error, fault: { level: 'warn', kind: 'database-unavailable' } };
  }
  return {
    error: new HttpError(500, 'internal_error', 'Something went wrong on our side. It has been logged.'),
    fault: { level: 'error', kind: 'internal' },
  };
}
