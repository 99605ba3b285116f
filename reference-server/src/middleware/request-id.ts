import type { RequestHandler } from 'express';
import { newRequestId } from '../internal/random.ts';
import { setRequestContext } from './request-context.ts';

/**
 * Gives every request an id, returned in `Request-Id` and in error envelopes, to quote to support. An id the
 * server already gave the request before express saw it (`createApiServer`) is kept.
 *
 * @example
 * app.use(requestId);
 */
export const requestId: RequestHandler = (_req, res, next) => {
  const given = res.getHeader('Request-Id');
  const id = typeof given === 'string' ? given : newRequestId();
  // receivedAt: when express first saw the request; the request log's duration counts from here.
  setRequestContext(res, { requestId: id, receivedAt: performance.now() });
  res.setHeader('Request-Id', id);
  next();
};
