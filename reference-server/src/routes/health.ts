import type { RequestHandler } from 'express';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { sendData } from './envelope.ts';

/**
 * `GET /health`, the load balancer's probe: `200 { data: { status: 'ok' } }` when the database answers
 * (`Store.ping`), else `503 service_unavailable` with `Retry-After: 1` in the envelope, so that an instance
 * that cannot reach its database is taken out of rotation and put back by itself once it can. A probe answers
 * within the store's ping timeout (2 s on PostgreSQL). The change is logged once each way (probes come every
 * few seconds; a line per probe would drown the log).
 *
 * @example
 * app.get('/health', healthRoute(store, logger));
 */
export function healthRoute(store: Pick<Store, 'ping'>, logger: Logger): RequestHandler {
  let reachable = true;
  return async (_req, res, next) => {
    try {
      await store.ping();
    } catch (error) {
      if (reachable) {
        reachable = false;
        logger.warn('health check: the database does not answer; /health answers 503 until it does', {
          error: error instanceof Error ? error.message : String(error),
        });
      }
      next(
        new HttpError(
          503,
          'service_unavailable',
          'The service cannot reach its database right now.',
          undefined,
          { 'Retry-After': '1' },
        ),
      );
      return;
    }
    if (!reachable) {
      reachable = true;
      logger.info('health check: the database answers again; /health answers 200');
    }
    sendData(res, { status: 'ok' });
  };
}
