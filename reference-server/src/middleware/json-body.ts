import express, { type RequestHandler } from 'express';
import { HttpError } from '../errors.ts';

const WITH_BODY = new Set(['POST', 'PATCH', 'PUT']);

/**
 * Spec §5: POST and PATCH carry `Content-Type: application/json`. A request with a body of any other type is
 * refused with 415 before it is read; a body-less POST (a cancel) needs no type. Bodies over the limit answer
 * 413 and malformed JSON 400 (through the error handler).
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!WITH_BODY.has(req.method)) return next();
    const length = req.headers['content-length'];
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
    if (hasBody && !req.is('application/json')) {
      return next(
        new HttpError(
          415,
          'unsupported_media_type',
          'Send the body as JSON with Content-Type: application/json.',
        ),
      );
    }
    next();
  };
  return [requireJson, express.json({ limit: limitBytes, type: 'application/json', strict: true })];
}

/**
 * Refuses a request whose declared `Content-Length` is over `limitBytes` with 413 `payload_too_large` at once,
 * before a byte of its body is read, and closes the connection after the answer (the body that was announced
 * is never read, so the connection cannot carry another request). Without it the body parser reached the same
 * 413 but answered only once the whole announced body had arrived: 10 MB announced and 5 bytes sent held the
 * connection until the request timeout (30 s), then 408. A chunked body is counted as it arrives, by the parser.
 *
 * @example
 * app.use(refuseOversizedBody(64 * 1024)); // before any body parser
 */
export function refuseOversizedBody(limitBytes: number): RequestHandler {
  return (req, _res, next) => {
    const declared = req.headers['content-length'];
    // Node itself refuses a Content-Length that is not a number (400) before this runs.
    if (declared === undefined || !(Number(declared) > limitBytes)) return next();
    next(
      new HttpError(
        413,
        'payload_too_large',
        `The request body is too large (at most ${limitBytes} bytes).`,
        undefined,
        {
          Connection: 'close',
        },
      ),
    );
  };
}
