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
