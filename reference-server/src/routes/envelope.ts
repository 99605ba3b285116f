import type { Response } from 'express';

/** The statuses a successful answer uses, with the short text `meta.message` carries (spec §7's shape). */
const SUCCESS_MESSAGES = { 200: 'OK', 201: 'Created', 202: 'Accepted' } as const;

export type SuccessStatus = keyof typeof SUCCESS_MESSAGES;

/**
 * Answers with `data` in the envelope `{ meta: { statusCode, message }, data }`. Every successful JSON answer of
 * the API goes through here (errors through the error middleware), so services return plain data and the
 * envelope is written in one place.
 *
 * @example
 * router.get('/api/widget/sessions/:id', secretKey, (req, res) => sendData(res, sessions.retrieve(caller, id)));
 */
export function sendData(res: Response, data: unknown, status: SuccessStatus = 200): void {
  res.status(status).json({ meta: { statusCode: status, message: SUCCESS_MESSAGES[status] }, data });
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
