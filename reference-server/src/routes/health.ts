import type { RequestHandler } from 'express';
import type { StorageHealth } from '../db/storage-health.ts';
import type { Store } from '../db/store.ts';
import { HttpError, storageFullError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { sendData } from './envelope.ts';

/**
 * `GET /health`, the load balancer's probe: `200 { data: { status: 'ok' } }` when the database answers
 * (`Store.ping`) and takes writes (`StorageHealth`), else `503 service_unavailable` in the envelope, so that an
 * instance that cannot reach its database, or whose disk is full, is taken out of rotation and put back by
 * itself once it can: `Retry-After: 1` for the database, the writes' own (30 s) for a full disk. A probe answers
 * within the store's ping timeout (2 s on PostgreSQL); while the disk is full, it may wait for one probe write.
 * The change is logged once each way (probes come every few seconds; a line per probe would drown the log).
 *
 * @example
 * app.get('/health', healthRoute(store, logger, storageHealth));
 */
export function healthRoute(
  store: Pick<Store, 'ping'>,
  logger: Logger,
  storage?: Pick<StorageHealth, 'takesWrites'>,
): RequestHandler {
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
    // StorageHealth logs its own changes.
    if (storage && !(await storage.takesWrites())) {
      return next(storageFullError('The service cannot store anything right now: its disk is full.'));
    }
    sendData(res, { status: 'ok' });
  };
}
