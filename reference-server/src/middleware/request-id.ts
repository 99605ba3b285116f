import type { RequestHandler } from 'express';
import { newRequestId } from '../internal/random.ts';
import { requestScope } from '../internal/request-scope.ts';
import { setRequestContext } from './request-context.ts';

/**
 * Gives every request an id, returned in `Request-Id` and in error envelopes, to quote to support. An id the
 * server already gave the request before express saw it (`createApiServer`) is kept. The rest of the request
 * runs in its `requestScope`, so every log line it writes carries the id.
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
  requestScope.run({ requestId: id }, next);
};
