import type { RequestHandler } from 'express';
import { randomBase62 } from '../internal/random.ts';

/** Gives every request an id, returned in `Request-Id` and in error envelopes, to quote to support. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = `req_${randomBase62(16)}`;
  res.locals.requestId = id;
  res.setHeader('Request-Id', id);
  next();
};
