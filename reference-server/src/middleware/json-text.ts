import type { Response } from 'express';

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
