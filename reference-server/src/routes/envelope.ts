import type { Response } from 'express';

// Written in middleware/ (idempotency replays through it, below the routes); the routes take it from here too.
export { sendJsonText } from '../middleware/json-text.ts';

/** The statuses a successful answer uses, with the short text `meta.message` carries (spec §7's shape). */
const SUCCESS_MESSAGES = { 200: 'OK', 201: 'Created', 202: 'Accepted' } as const;

export type SuccessStatus = keyof typeof SUCCESS_MESSAGES;

/** Any value but a promise: an answer must be awaited before it is sent (the store's reads are asynchronous). */
type Settled<T> = T extends PromiseLike<unknown> ? never : T;

/**
 * Answers with `data` in the envelope `{ meta: { statusCode, message }, data }`. Every successful JSON answer of
 * the API goes through here (errors through the error middleware), so services return plain data and the
 * envelope is written in one place.
 *
 * @example
 * router.get('/api/widget/sessions/:id', secretKey, async (req, res) => {
 *   sendData(res, await sessions.retrieve(apiCaller(res), String(req.params.id)));
 * });
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
 * router.get('/api/webhooks', secretKey, (req, res) => sendPage(res, webhooks.list(caller, query)));
 */
export function sendPage(res: Response, page: { data: unknown[]; pagination: unknown }): void {
  res.status(200).json({ meta: { statusCode: 200, message: SUCCESS_MESSAGES[200] }, ...page });
}
