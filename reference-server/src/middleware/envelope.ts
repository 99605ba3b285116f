import type { ErrorBody, ErrorCode, FieldError } from '@servicepay/node/protocol';
import type { Response } from 'express';
import type { HttpError } from '../errors.ts';
import { requestIdOf, setRequestContext } from './request-context.ts';

/**
 * The envelope every JSON answer of the service is written in, success and error alike, in one module:
 * `{ meta: { statusCode, message }, data }` (lists add `pagination`) and
 * `{ meta: { statusCode, message, code, requestId }, errors? }` (spec §7). Services return plain data and
 * throw; the operations' answers (`mountOperations`), the error handler, the middleware's early refusals and the
 * bare answers Node would give itself (`client-error.ts`) all write through here. The portal's pages answer
 * the same errors as HTML (`portal/portal-routes.ts`).
 */

/** The statuses a successful answer uses, with the short text `meta.message` carries (spec §7's shape). */
const SUCCESS_MESSAGES = { 200: 'OK', 201: 'Created', 202: 'Accepted' } as const;

export type SuccessStatus = keyof typeof SUCCESS_MESSAGES;

/** Any value but a promise: an answer must be awaited before it is sent (the store's reads are asynchronous). */
type Settled<T> = T extends PromiseLike<unknown> ? never : T;

/**
 * Answers with `data` in the envelope `{ meta: { statusCode, message }, data }`.
 *
 * @example
 * sendData(res, await sessions.retrieve(caller, id));
 */
export function sendData<T>(res: Response, data: Settled<T>, status: SuccessStatus = 200): void {
  // Through res.json: the idempotency middleware (`idempotent`) remembers an answer where res.json is called.
  res.status(status).json({ meta: { statusCode: status, message: SUCCESS_MESSAGES[status] }, data });
}

/**
 * The envelope of `sendData` as the exact text sent: for an answer that is also stored (an idempotent create
 * remembers these bytes in the transaction that makes the session, then sends them).
 *
 * @example
 * const text = dataEnvelopeText(session, 201); // '{"meta":{"statusCode":201,"message":"Created"},"data":{…}}'
 */
export function dataEnvelopeText<T>(data: Settled<T>, status: SuccessStatus): string {
  return JSON.stringify({ meta: { statusCode: status, message: SUCCESS_MESSAGES[status] }, data });
}

/**
 * Answers with one page of a list: `{ meta, data: [...], pagination: { hasMore, nextCursor } }`.
 *
 * @example
 * sendList(res, await webhooks.list(caller, query));
 */
export function sendList(res: Response, page: { data: unknown[]; pagination: unknown }): void {
  res.status(200).json({ meta: { statusCode: 200, message: SUCCESS_MESSAGES[200] }, ...page });
}

/**
 * Sends JSON text as it is, with its length, in one write (express's res.json would also turn it into a Buffer
 * and hash it for an ETag, which a no-store answer never uses). What `sendData` would have sent for the same
 * value, byte for byte: the idempotency middleware sends a remembered answer, and an answer it has just
 * remembered, through here.
 *
 * @example
 * sendJsonText(res, 201, remembered);
 */
export function sendJsonText(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * The error envelope's text. For the answers written outside express too (`client-error.ts`).
 *
 * @example
 * errorEnvelopeText(408, 'request_timeout', 'The request did not arrive in time.', 'req_…');
 */
export function errorEnvelopeText(
  status: number,
  code: ErrorCode,
  message: string,
  requestId: string | undefined,
  fieldErrors?: FieldError[],
): string {
  const body: ErrorBody = {
    meta: { statusCode: status, message, code, requestId },
    ...(fieldErrors ? { errors: fieldErrors } : {}),
  };
  return JSON.stringify(body);
}

/**
 * Writes the error envelope of `error`, with its headers (`Retry-After`).
 *
 * @example
 * sendError(res, new HttpError(404, 'not_found', 'No such session.'));
 */
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
  const text = errorEnvelopeText(status, code, message, requestIdOf(res), fieldErrors);
  // What the request log keeps of a refused request (`middleware/request-log.ts`).
  setRequestContext(res, { errorBody: text });
  sendJsonText(res, status, text);
}
