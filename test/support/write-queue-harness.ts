import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { Queryable } from '../../reference-server/src/db/postgres/notification-channel.ts';
import {
  PostgresWriteQueue,
  type PostgresWriteQueueOptions,
} from '../../reference-server/src/db/postgres/postgres-write-queue.ts';
import type { ScratchPostgres } from './postgres.ts';
import { useScratchDatabase } from './scratch-database.ts';

// Issue 13: "a PostgresWriteQueue: one transaction per job on a pool client, afterCommit effects after COMMIT, a
// retry on serialization failure or deadlock (40001/40P01)", and "no connection leak under load or when the
// database restarts". The test/postgres/postgres-write-queue-*.test.ts files pin those promises, one behaviour a
// file; this is what they share. The jobs use a small table set of their own, bound through the same `bind` the
// service's repositories go through; every race is a real one between real transactions on a real PostgreSQL.

/** What the test jobs get as `tx`: statements on the job's transaction. */
export interface TestTx {
  rows<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
}

const bindTest = (client: Queryable): TestTx => ({
  async rows<T>(text: string, values?: unknown[]) {
    return ((await client.query(text, values)) as { rows: T[] }).rows;
  },
});

/**
 * Resolves every party's `arrive()` once all of them have arrived: forces an interleaving between jobs.
 *
 * @example
 * const bothHaveRead = barrier(2);
 * // in each of two jobs, after its read:
 * await bothHaveRead.arrive();
 */
export function barrier(parties: number): { arrive(): Promise<void> } {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    arrive(): Promise<void> {
      arrived += 1;
      if (arrived === parties) open();
      return opened;
    },
  };
}

const SCHEMA = `
CREATE TABLE counters (id text PRIMARY KEY, value int NOT NULL);
CREATE TABLE orders (id text PRIMARY KEY, status text NOT NULL, paid_by text);
CREATE TABLE journal (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, job text NOT NULL);
CREATE TABLE doctors (name text PRIMARY KEY, on_call boolean NOT NULL);
-- Checked at COMMIT: a duplicate is refused by the COMMIT itself, with an answer from the server.
CREATE TABLE tickets (code text UNIQUE DEFERRABLE INITIALLY DEFERRED);
-- A COMMIT that takes 30 s: a deferred constraint trigger runs at COMMIT, so a test can cut the connection
-- while COMMIT is in flight.
CREATE TABLE slow_commits (id text PRIMARY KEY);
CREATE FUNCTION sleep_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON slow_commits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sleep_at_commit();
`;

/** The size of each of the two pools: the most connections one instance may hold. */
export const POOL_SIZE = 12;

/** The database, pools and helpers of a write-queue test file (see `useWriteQueueHarness`). */
export interface WriteQueueHarness {
  /** The scratch cluster (`restart()` for the database-restart test). */
  readonly postgres: ScratchPostgres;
  /** The database's URL. */
  readonly url: string;
  /** Two pools: two instances of the service on one database. */
  readonly poolA: pg.Pool;
  readonly poolB: pg.Pool;
  /** Outside both pools: sets tables up, reads what was committed, terminates backends. */
  readonly admin: pg.Client;
  /** What either pool (or another a test opens with `onPoolError`) reported of an idle client's lost connection. */
  readonly poolErrors: Error[];
  /** What the queues' `onEffectError` received in the current test. */
  readonly effectErrors: unknown[];
  /** Hands to a pool a test opens itself, so that its lost connections are recorded with the others. */
  onPoolError(error: Error): void;
  /** Connects `admin` again (after the database restarted). */
  connectAdmin(): Promise<void>;
  /** A queue on `pool` (poolA when omitted) whose effect errors go to `effectErrors`. */
  queue(pool?: pg.Pool, options?: Partial<PostgresWriteQueueOptions>): PostgresWriteQueue<TestTx>;
  /** Rows as another connection (admin) sees them: what was committed. */
  committed<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  /**
   * Terminates the backend sleeping in `pg_sleep` (the statement or the COMMIT a test cuts in flight), once it
   * is there: `onlyQuery` narrows it to the backend running that statement text.
   */
  cutSleepingBackend(onlyQuery?: string): Promise<void>;
}

/**
 * The setup every write-queue test file shares: a scratch cluster with database `write_queue`, pools A and B of
 * `POOL_SIZE` (their lost connections recorded in `poolErrors`), the admin connection and the test tables; each
 * test starts on empty tables, and after each one the harness checks that nothing leaked (every client back and
 * idle, nobody waiting, PostgreSQL seeing exactly the pools' connections, none inside a transaction). Call it
 * first in the file's `describe`; the functions may be destructured, the connections are read from the harness.
 *
 * @example
 * describe.runIf(postgresAvailable)('PostgresWriteQueue on a real PostgreSQL', () => {
 *   const harness = useWriteQueueHarness();
 *   const { queue, committed } = harness;
 *   it('commits', async () => {
 *     await queue().run(async (tx) => tx.rows("INSERT INTO journal (job) VALUES ('one')"));
 *     expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'one' }]);
 *   });
 * });
 */
export function useWriteQueueHarness(): WriteQueueHarness {
  const poolErrors: Error[] = [];
  const effectErrors: unknown[] = [];
  const onPoolError = (error: Error) => {
    poolErrors.push(error);
  };
  // An idle client whose connection is lost is reported to onPoolError (a database restart); the pool drops it.
  const scratch = useScratchDatabase({
    database: 'write_queue',
    // Pipelined, as the service's pool is (db/backend.ts): BEGIN travels with the job's first statement.
    pools: { poolA: { max: POOL_SIZE, pipeline: true }, poolB: { max: POOL_SIZE, pipeline: true } },
    onPoolError,
  });
  let admin: pg.Client;

  const connectAdmin = async () => {
    admin = new pg.Client({ connectionString: scratch.url });
    admin.on('error', () => {});
    await admin.connect();
  };

  beforeAll(async () => {
    await connectAdmin();
    await admin.query(SCHEMA);
  });

  afterAll(async () => {
    await admin?.end().catch(() => {});
  });

  beforeEach(async () => {
    effectErrors.length = 0;
    await admin.query('TRUNCATE counters, orders, journal, doctors, tickets, slow_commits');
  });

  /**
   * Nothing leaked: every client either pool created is back and idle, nobody waits for one, and PostgreSQL
   * sees exactly the pools' connections, none of them inside a transaction.
   */
  afterEach(async () => {
    const { poolA, poolB } = scratch;
    const look = async () => {
      const { rows } = await admin.query<{ connections: number; busy: number }>(
        `SELECT count(*)::int AS connections, count(*) FILTER (WHERE state <> 'idle')::int AS busy
           FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      return {
        poolA: { total: poolA.totalCount, idle: poolA.idleCount, waiting: poolA.waitingCount },
        poolB: { total: poolB.totalCount, idle: poolB.idleCount, waiting: poolB.waitingCount },
        server: rows[0],
      };
    };
    const settled = (seen: Awaited<ReturnType<typeof look>>) =>
      seen.poolA.idle === seen.poolA.total &&
      seen.poolB.idle === seen.poolB.total &&
      seen.poolA.waiting + seen.poolB.waiting === 0 &&
      seen.server?.busy === 0 &&
      seen.server.connections === seen.poolA.total + seen.poolB.total;
    // A terminated backend leaves pg_stat_activity a moment after its client saw the error.
    let seen = await look();
    for (let i = 0; i < 50 && !settled(seen); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await look();
    }
    expect(seen.poolA.idle).toBe(seen.poolA.total);
    expect(seen.poolB.idle).toBe(seen.poolB.total);
    expect(seen.poolA.waiting + seen.poolB.waiting).toBe(0);
    expect(seen.server).toEqual({ connections: seen.poolA.total + seen.poolB.total, busy: 0 });
    expect(seen.poolA.total).toBeLessThanOrEqual(POOL_SIZE);
  });

  const queue = (
    pool: pg.Pool = scratch.poolA,
    options: Partial<PostgresWriteQueueOptions> = {},
  ): PostgresWriteQueue<TestTx> =>
    new PostgresWriteQueue(pool, bindTest, {
      onEffectError: (error) => effectErrors.push(error),
      ...options,
    });

  const committed = async <T = Record<string, unknown>>(text: string, values?: unknown[]) =>
    (await admin.query(text, values)).rows as T[];

  const cutSleepingBackend = async (onlyQuery?: string) => {
    let pid: number | undefined;
    for (let i = 0; i < 200 && pid === undefined; i++) {
      const [row] = await committed<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND wait_event = 'PgSleep'
            AND ($1::text IS NULL OR query = $1)`,
        [onlyQuery ?? null],
      );
      pid = row?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pid).toBeDefined();
    await committed('SELECT pg_terminate_backend($1)', [pid]);
  };

  return {
    get postgres() {
      return scratch.postgres;
    },
    get url() {
      return scratch.url;
    },
    get poolA() {
      return scratch.poolA;
    },
    get poolB() {
      return scratch.poolB;
    },
    get admin() {
      return admin;
    },
    poolErrors,
    effectErrors,
    onPoolError,
    connectAdmin,
    queue,
    committed,
    cutSleepingBackend,
  };
}
