import type { ErrorBody, ErrorCode, FieldError } from '@servicepay/node/protocol';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ZodError } from 'zod';
import { databaseUnavailable, storageFull } from '../db/database-errors.ts';
import { DomainError } from '../domain-errors.ts';
import { HttpError, storageFullError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { httpErrorOf } from './domain-error-status.ts';
import { requestIdOf, setRequestContext } from './request-context.ts';

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
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Writes the error envelope `{ meta: { statusCode, message, code, requestId }, errors? }`. */
export function sendError(res: Response, error: HttpError): void {
  if (error.headers) res.set(error.headers);
  sendErrorEnvelope(res, error.status, error.code, error.message, error.fieldErrors);
}

/**
 * The same envelope without an `HttpError`: for an answer decided on the hot path (a 429 over the budget), where
 * building an Error (its stack trace) and routing it through express's error handling would cost more than the
 * answer itself.
 *
 * @example
 * sendErrorEnvelope(res, 429, 'rate_limited', 'Too many requests. Wait for Retry-After seconds, then retry.');
 */
export function sendErrorEnvelope(
  res: Response,
  status: number,
  code: ErrorCode,
  message: string,
  fieldErrors?: FieldError[],
): void {
  const body: ErrorBody = {
    meta: { statusCode: status, message, code, requestId: requestIdOf(res) },
    ...(fieldErrors ? { errors: fieldErrors } : {}),
  };
  // Written as text with its length, not through express's res.json (which also hashes it for an ETag, useless
  // on a no-store answer): one write of headers and body.
  const text = JSON.stringify(body);
  // What the request log keeps of a refused request (`middleware/request-log.ts`).
  setRequestContext(res, { errorBody: text });
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * Zod's issues as field errors with dotted paths (`payer.email`). An unknown field is named by its own path
 * (`payer.nickname`), one error per field: zod reports them as one issue on the object that holds them.
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

/** body-parser and the router report client faults as errors with a 4xx `status`; map them to codes. */
function fromClientFault(status: number, type: unknown): HttpError {
  if (status === 413) return new HttpError(413, 'payload_too_large', 'The request body is too large.');
  if (status === 415) return new HttpError(415, 'unsupported_media_type', 'The body must be UTF-8 JSON.');
  if (type === 'entity.parse.failed')
    return new HttpError(400, 'malformed_json', 'The request body is not valid JSON.');
  return new HttpError(status, 'bad_request', STATUS_TEXT[status] ?? 'Bad Request');
}

/**
 * The one place errors become responses. A client's fault answers 4xx with a clear message; anything else is
 * the service's fault: logged with the request id (never the request itself) and answered 500 without details,
 * or 503 `service_unavailable` with `Retry-After` when a write found no space (`onStorageFull` is told, so that
 * `/health` answers 503 too) or the database could not be reached.
 */
export function errorHandler(
  logger: Logger,
  onStorageFull: (error: unknown) => void = () => {},
): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      // Too late for a status (a CSV export streaming, routes/csv-response.ts): the connection is closed so the
      // client sees a truncated answer, never a short one that looks complete, and the cause is logged.
      logger.error('response failed after its first byte', {
        requestId: requestIdOf(res),
        route: req.route?.path,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      res.destroy();
      return;
    }
    if (error instanceof HttpError) return sendError(res, error);
    if (error instanceof DomainError) return sendError(res, httpErrorOf(error));
    if (error instanceof ZodError) return sendError(res, validationError(error));
    const fault = error as { status?: unknown; statusCode?: unknown; type?: unknown };
    const status = typeof fault.status === 'number' ? fault.status : fault.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return sendError(res, fromClientFault(status, fault.type));
    // Before the outage check, which takes any errno-like code (ENOSPC too) for a lost connection.
    if (storageFull(error)) {
      onStorageFull(error);
      logger.warn('write refused: no space left', {
        requestId: requestIdOf(res),
        route: req.route?.path,
        error: error instanceof Error ? error.message : String(error),
      });
      return sendError(res, storageFullError());
    }
    if (databaseUnavailable(error)) {
      // The database is down or unreachable (PostgreSQL): nothing the client sent is at fault, and a retry
      // may well succeed. A write whose COMMIT got no answer may have taken effect: the client's retry with
      // the same Idempotency-Key finds out.
      logger.warn('database unavailable', {
        requestId: requestIdOf(res),
        route: req.route?.path,
        error: error instanceof Error ? error.message : String(error),
      });
      return sendError(
        res,
        new HttpError(
          503,
          'service_unavailable',
          'The service cannot reach its database right now. Retry shortly (with the same Idempotency-Key for a POST).',
          undefined,
          { 'Retry-After': '1' },
        ),
      );
    }
    logger.error('unhandled error', {
      requestId: requestIdOf(res),
      method: req.method,
      route: req.route?.path,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
    sendError(
      res,
      new HttpError(500, 'internal_error', 'Something went wrong on our side. It has been logged.'),
    );
  };
}

export const routeNotFound: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, 'route_not_found', `No route ${req.method} ${req.path}.`));
};
