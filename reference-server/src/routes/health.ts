import type { RequestHandler } from 'express';
import type { StorageHealth } from '../db/storage-health.ts';
import type { Store } from '../db/store.ts';
import { HttpError, storageFullError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { readinessAnswered } from '../metrics/metrics.ts';
import { sendData } from '../middleware/envelope.ts';

/**
 * `GET /health`, the load balancer's probe: `200 { data: { status: 'ok' } }` when the database answers
 * (`Store.ping`) and takes writes (`StorageHealth`), else `503 service_unavailable` in the envelope, so that an
 * instance that cannot reach its database, or whose disk is full, is taken out of rotation and put back by
 * itself once it can: `Retry-After: 1` for the database, the writes' own (30 s) for a full disk. A probe answers
 * within the store's ping timeout (2 s on PostgreSQL); while the disk is full, it may wait for one probe write.
 * The change is logged once each way (probes come every few seconds; a line per probe would drown the log).
 *
 * @example
 * router.get('/health', healthRoute(databaseCheck(store, logger, storageHealth)));
 */
function healthRoute(check: () => Promise<HttpError | undefined>): RequestHandler {
  return async (_req, res, next) => {
    const refusal = await check();
    if (refusal) return next(refusal);
    sendData(res, { status: 'ok' });
  };
}

/**
 * The answer `/health` gives, without HTTP: undefined when the database answers and takes writes, else the
 * 503 to send. The change is logged once each way.
 */
function databaseCheck(
  store: Pick<Store, 'ping'>,
  logger: Logger,
  storage?: Pick<StorageHealth, 'takesWrites'>,
): () => Promise<HttpError | undefined> {
  let reachable = true;
  return async () => {
    try {
      await store.ping();
    } catch (error) {
      if (reachable) {
        reachable = false;
        logger.warn('health check: the database does not answer; /health answers 503 until it does', {
          error: error instanceof Error ? error.message : String(error),
        });
      }
      return new HttpError(
        503,
        'service_unavailable',
        'The service cannot reach its database right now.',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    if (!reachable) {
      reachable = true;
      logger.info('health check: the database answers again; /health answers 200');
    }
    // StorageHealth logs its own changes.
    if (storage && !(await storage.takesWrites())) {
      return storageFullError('The service cannot store anything right now: its disk is full.');
    }
    return undefined;
  };
}

/**
 * `GET /health/live`, the liveness probe: `200 { data: { status: 'live' } }` whenever the process can answer at
 * all, whatever its database does. A supervisor (Kubernetes' `livenessProbe`) restarts a process that stops
 * answering it; it never asks the database, so a database outage does not get every instance restarted.
 *
 * @example
 * router.get('/health/live', liveRoute);
 */
const liveRoute: RequestHandler = (_req, res) => {
  sendData(res, { status: 'live' });
};

/** How long a probe write's answer stands for the readiness probes that follow it (ms). */
const WRITE_PROBE_REUSE_MS = 1_000;
/** How long a readiness probe waits for its write before it answers 503 (ms). */
const WRITE_PROBE_TIMEOUT_MS = 2_000;

/**
 * `GET /health/ready`, what a load balancer asks: `200 { data: { status: 'ready' } }` only when the database
 * answers (as `/health`) and one probe write (`Store.probeWrite`: a counter bumped on SQLite, a row rolled back
 * on PostgreSQL) commits within 2 s; else `503 service_unavailable` in the envelope with `Retry-After: 1` (the
 * disk full: `storage_full`, as `/health`). Probes share one write: at most one is in flight, and its answer
 * stands for a second, so a balancer polling every instance often costs one small write a second each.
 *
 * @example
 * router.get('/health/ready', readyRoute(check, store, logger, storageHealth));
 */
function readyRoute(
  check: () => Promise<HttpError | undefined>,
  store: Pick<Store, 'probeWrite'>,
  logger: Logger,
  storage?: Pick<StorageHealth, 'noteFailure'>,
): RequestHandler {
  let probe: Promise<Error | undefined> | undefined;
  let probedAt = Number.NEGATIVE_INFINITY;
  let writing = true;
  const probeWrite = () => {
    if (probe && performance.now() - probedAt < WRITE_PROBE_REUSE_MS) return probe;
    probedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<Error>((resolve) => {
      timer = setTimeout(() => resolve(new Error('the probe write took over 2 s')), WRITE_PROBE_TIMEOUT_MS);
    });
    const written = store.probeWrite().then(
      () => undefined,
      (error: unknown) => {
        storage?.noteFailure(error);
        return error instanceof Error ? error : new Error(String(error));
      },
    );
    probe = Promise.race([written, timeout]).finally(() => clearTimeout(timer));
    return probe;
  };
  return async (_req, res, next) => {
    const refusal = await check();
    const failed = refusal ? undefined : await probeWrite();
    readinessAnswered(!refusal && !failed);
    if (refusal) return next(refusal);
    if (failed) {
      if (writing) {
        writing = false;
        logger.warn('readiness: a probe write failed; /health/ready answers 503 until one succeeds', {
          error: failed.message,
        });
      }
      return next(
        new HttpError(
          503,
          'service_unavailable',
          'The service cannot write to its database right now.',
          undefined,
          { 'Retry-After': '1' },
        ),
      );
    }
    if (!writing) {
      writing = true;
      logger.info('readiness: probe writes succeed again; /health/ready answers 200');
    }
    sendData(res, { status: 'ready' });
  };
}

/**
 * The handlers of the health endpoints (issue 28), for their operations (`routes/service-operations.ts`):
 * `/health` (as before: the database answers and takes writes), `/health/live` (the process answers) and
 * `/health/ready` (the database answers and a probe write commits). `/health` and `/health/ready` share one
 * database check, so an outage is logged once, not once per endpoint.
 *
 * @example
 * const { health, healthLive, healthReady } = healthHandlers(store, logger, storageHealth);
 */
export function healthHandlers(
  store: Pick<Store, 'ping' | 'probeWrite'>,
  logger: Logger,
  storage?: Pick<StorageHealth, 'takesWrites' | 'noteFailure'>,
): { health: RequestHandler; healthLive: RequestHandler; healthReady: RequestHandler } {
  const check = databaseCheck(store, logger, storage);
  return {
    health: healthRoute(check),
    healthLive: liveRoute,
    healthReady: readyRoute(check, store, logger, storage),
  };
}
