import type { StorageHealth } from '../db/storage-health.ts';
import type { Store } from '../db/store.ts';
import { HttpError, storageFullError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { readinessAnswered } from '../metrics/metrics.ts';

/**
 * The answer `/health` gives, without HTTP: undefined when the database answers and takes writes, else the
 * 503 `service_unavailable` to send (`Retry-After: 1` when the database does not answer; while the disk is
 * full, `storageFullError`'s, the same code with the writes' `Retry-After: 30`). The change is logged once each
 * way.
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

/** How long a probe write's answer stands for the readiness probes that follow it (ms). */
const WRITE_PROBE_REUSE_MS = 1_000;
/** How long a readiness probe waits for its write before it answers 503 (ms). */
const WRITE_PROBE_TIMEOUT_MS = 2_000;

/**
 * The answer `/health/ready` gives, without HTTP: undefined only when the database answers (as `/health`) and
 * one probe write (`Store.probeWrite`: a counter bumped on SQLite, a row rolled back on PostgreSQL) commits
 * within 2 s; else the 503 to send. Probes share one write: at most one is in flight, and its answer stands for
 * a second, so a balancer polling every instance often costs one small write a second each.
 */
function readinessCheck(
  check: () => Promise<HttpError | undefined>,
  store: Pick<Store, 'probeWrite'>,
  logger: Logger,
  storage?: Pick<StorageHealth, 'noteFailure'>,
): () => Promise<HttpError | undefined> {
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
  return async () => {
    const refusal = await check();
    const failed = refusal ? undefined : await probeWrite();
    readinessAnswered(!refusal && !failed);
    if (refusal) return refusal;
    if (failed) {
      if (writing) {
        writing = false;
        logger.warn('readiness: a probe write failed; /health/ready answers 503 until one succeeds', {
          error: failed.message,
        });
      }
      return new HttpError(
        503,
        'service_unavailable',
        'The service cannot write to its database right now.',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    if (!writing) {
      writing = true;
      logger.info('readiness: probe writes succeed again; /health/ready answers 200');
    }
    return undefined;
  };
}

/**
 * What the health endpoints ask (issue 28), without HTTP: each answers undefined when the instance is fit, else
 * the 503 to answer. `database`: `/health`, the load balancer's probe (the database answers, `Store.ping`, and
 * takes writes, `StorageHealth`; `Retry-After: 1` for the database, the writes' own 30 s for a full disk).
 * `ready`: `/health/ready` (what `database` asks, then a probe write commits; 503 `service_unavailable` either
 * way). They share one database check, so an outage is logged once each way, not once per probe or per endpoint
 * (probes come every few seconds).
 */
export interface HealthChecks {
  database(): Promise<HttpError | undefined>;
  ready(): Promise<HttpError | undefined>;
}

/**
 * The health endpoints' checks, for their operations' handlers (`routes/service-operations.ts`).
 *
 * @example
 * const health = healthChecks(store, logger, storageHealth);
 * const refusal = await health.database(); // undefined, or the 503 to answer
 */
export function healthChecks(
  store: Pick<Store, 'ping' | 'probeWrite'>,
  logger: Logger,
  storage?: Pick<StorageHealth, 'takesWrites' | 'noteFailure'>,
): HealthChecks {
  const database = databaseCheck(store, logger, storage);
  return { database, ready: readinessCheck(database, store, logger, storage) };
}
