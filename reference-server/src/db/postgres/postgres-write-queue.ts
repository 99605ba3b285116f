import pLimit, { type LimitFunction } from 'p-limit';
import type pg from 'pg';
import type { WriteContext, WriteOptions, Writes } from '../repositories.ts';
import { runEffects } from '../run-effects.ts';
import { JobClient } from './job-client.ts';
import { CommitOutcomeUnknownError, connectionLost, isRetryable, sqlState } from './postgres-errors.ts';
import type { Queryable } from './postgres-runner.ts';

/** The isolation level each job's transaction runs at (`BEGIN ISOLATION LEVEL …`). */
export type PostgresIsolation = 'read committed' | 'repeatable read' | 'serializable';

export interface PostgresWriteQueueOptions {
  /** Told of an after-commit effect that threw (or whose promise rejected); the write stays committed. */
  onEffectError: (error: unknown) => void;
  /**
   * How many times a job runs in all before a serialization failure or a deadlock (40001, 40P01) is handed
   * to its caller. Default 5.
   */
  maxAttempts?: number;
  /**
   * Default `'read committed'`: see `PostgresWriteQueue` for why. `'repeatable read'` and `'serializable'`
   * make a plain read-then-write job correct by retrying it, at the price of a retry for every collision.
   */
  isolation?: PostgresIsolation;
}

/** Random backoff before attempt n + 1: up to 5 ms × 2^(n-1), at most 100 ms ("full jitter"). */
const BACKOFF_BASE_MS = 5;
const BACKOFF_MAX_MS = 100;

type Attempt<T> =
  | { outcome: 'committed'; value: T; effects: Array<() => void> }
  | { outcome: 'retry'; error: unknown }
  | { outcome: 'failed'; error: unknown };

/** A one-statement job's connection broke while its statement was in flight: committed or not, nobody knows. */
const cutInFlight = (cause: unknown): Attempt<never> => ({
  outcome: 'failed',
  error: new CommitOutcomeUnknownError(
    'the connection to PostgreSQL broke while a one-statement write was in flight: it may or may not have been committed',
    { cause },
  ),
});

/**
 * Where the service's writes go on PostgreSQL: `run` takes a client from the pool, runs the job in one
 * transaction on it with the repositories bound to that client (`bind`), commits, returns the client, and
 * only then runs the job's `afterCommit` effects, in order, before the job's promise resolves. A job that
 * throws is rolled back alone and its promise rejects with its own error; its effects never run.
 *
 * **Isolation: READ COMMITTED by default.** The repositories make every read-check-write safe themselves:
 * a transition is a conditional update (`UPDATE sessions … WHERE id = $1 AND status = $expected`, which after
 * waiting for a concurrent writer's row lock re-checks its `WHERE` against the row as committed) or reads the
 * row `FOR UPDATE` first; first-writer-wins inserts are `ON CONFLICT DO NOTHING`. Then concurrent jobs on one
 * row queue on its lock and each sees the previous one's result: 50 duplicate notifications give one winner
 * in 50 single attempts. Under REPEATABLE READ or SERIALIZABLE each of the 50 would fail with 40001 whenever a
 * commit overtook its snapshot and be run again, the last of them up to 49 times (with `maxAttempts` 5 most
 * would give up), and SERIALIZABLE adds predicate-lock bookkeeping to every read. Those levels remain an
 * option (`isolation`) for a job that cannot lock what it reads.
 *
 * **Retries.** A serialization failure or a deadlock (SQLSTATE 40001, 40P01; a deadlock can happen at any
 * level, two jobs locking two rows in opposite order) in any statement or at `COMMIT` means PostgreSQL rolled
 * the transaction back: the attempt's effects are dropped and the whole job runs again on a fresh client
 * after a small random backoff, up to `maxAttempts` runs, after which the job rejects with the last such
 * error. A statement refused for a duplicate key (23505) is retried the same way: it is how two instances
 * inserting the same first-time row (a bank notification, a settled transfer) collide, and the retry reads
 * the winner's row. So a job must be safe to run again: store work only, everything else through `afterCommit`.
 *
 * **Broken connections.** A client whose connection failed is released with the error, so the pool closes
 * it instead of handing it to the next job, and the job rejects (a connection that broke before `COMMIT` was
 * sent never commits; it is not retried here, since the database is likely down: the caller answers 503).
 * If it broke while `COMMIT` was in flight, the job rejects with `CommitOutcomeUnknownError`, never retried.
 * A job that caught a failed statement and returned anyway is told so: PostgreSQL answers such a `COMMIT`
 * with `ROLLBACK`, and the job rejects rather than report writes that did not happen.
 *
 * **Pipelined.** On a pool made with `pipeline: true` (the service's, `db/backend.ts`), `BEGIN` is written
 * without waiting for its answer, so it travels with the job's first statement, and statements a job sends
 * together (`Promise.all`) go out together: one round trip where each cost one. PostgreSQL still runs them
 * one after another, in the order they were sent, in the job's transaction. A `BEGIN` that fails fails the
 * statements behind it, and the attempt ends as one whose `BEGIN` failed. Without `pipeline`, `BEGIN` is
 * awaited first and the statements of a job are sent one at a time, as before.
 *
 * **One-statement jobs** (`WriteOptions.oneStatement`, the session create) skip `BEGIN` and `COMMIT`: the
 * statement is its own transaction, one round trip instead of three (`attemptOneStatement`). Its outcome is
 * unknown only when the connection broke while the statement was in flight; one lost before it went out fails
 * the job with that loss, not retried, as above.
 *
 * **No group commit here.** SQLite's `WriteQueue` batches jobs into one transaction because it has one
 * writer and each commit costs an fsync. On PostgreSQL each job has its own connection and the server does
 * the grouping itself: concurrent commits wait on one WAL flush together (one fsync covers every commit
 * record written before it). Batching jobs into one transaction would instead put them on one connection one
 * after another, make every job in the batch wait on any one job's lock, and turn one job's deadlock into a
 * retry of all of them. The pool size is the concurrency: at most `max` jobs run at once per instance, the
 * rest wait for a client (`pool.waitingCount`), so throughput is about `max / (time a job holds its
 * client)`: its round trips plus any lock wait. Raising `max` helps while jobs mostly wait on the network;
 * past the database's cores and disk it only adds contention, and jobs on the same row run one at a time
 * whatever the pool size. Every instance's pool counts against `max_connections`.
 *
 * @example
 * const writes = new PostgresWriteQueue(pool, (client) => ({ sessions: new PostgresSessionRepository(client) }), {
 *   onEffectError: (error) => logger.error('after-commit effect failed', { error: String(error) }),
 * });
 * const paid = await writes.run(async (tx, context) => {
 *   // A conditional update: of 50 duplicate notifications on any instances, one gets the session as changed.
 *   const won = await tx.sessions.change(id, 'awaiting_payment', {
 *     status: 'successful', updatedAt: now, accountNumber, mismatchReceived: null, paidAt: now,
 *   });
 *   if (won) context.afterCommit(() => broadcaster.publish(update));
 *   return won;
 * });
 */
export class PostgresWriteQueue<R> implements Writes<R> {
  private readonly maxAttempts: number;
  private readonly begin: string;
  /**
   * At most as many attempts at once as the pool has clients; the rest wait here, in order, for as long as it
   * takes. Left to wait in the pool instead, a job of a burst larger than the pool failed once it had waited
   * `connectionTimeoutMillis` for a client, although nothing was wrong with the database (1,000 sessions made
   * at once on a loaded machine). The pool's timeout then means what it says: no connection could be made.
   */
  private readonly slots: LimitFunction;

  constructor(
    private readonly pool: pg.Pool,
    private readonly bind: (client: Queryable) => R,
    private readonly options: PostgresWriteQueueOptions,
  ) {
    const maxAttempts = options.maxAttempts ?? 5;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error('maxAttempts must be ≥ 1');
    const isolation = options.isolation ?? 'read committed';
    if (!['read committed', 'repeatable read', 'serializable'].includes(isolation)) {
      throw new Error(`not an isolation level: ${String(isolation)}`);
    }
    this.maxAttempts = maxAttempts;
    this.slots = pLimit(pool.options.max ?? 10);
    this.begin = `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`;
  }

  async run<T>(work: (tx: R, context: WriteContext) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.slots(() =>
        options.oneStatement ? this.attemptOneStatement(work) : this.attempt(work),
      );
      if (result.outcome === 'committed') {
        runEffects(result.effects, this.options.onEffectError);
        return result.value;
      }
      if (result.outcome === 'failed' || attempt >= this.maxAttempts) throw result.error;
      const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
    }
  }

  /** One run of the job in its own transaction on its own client; the client is back in the pool after. */
  private async attempt<T>(work: (tx: R, context: WriteContext) => Promise<T>): Promise<Attempt<T>> {
    const job = new JobClient(await this.pool.connect());
    const { client } = job;
    let releaseError: Error | undefined;
    try {
      // Pipelined: not awaited, so it leaves with the job's first statement; its failure is thrown below.
      const begun = client.query(this.begin);
      if (!job.pipelined) await begun;
      else begun.catch(() => undefined);
      let value: T;
      try {
        value = await Promise.resolve().then(() => work(this.bind(job.queryable), job.context));
      } catch (error) {
        job.close();
        // The job's statements failed because BEGIN did: the attempt is one whose BEGIN failed (below).
        await begun;
        releaseError = await this.rollback(client, () => job.lost);
        const retry = isRetryable(error) || job.retryableStatement !== undefined;
        return { outcome: retry ? 'retry' : 'failed', error };
      }
      job.sendWithCommit();
      job.close();
      await begun;
      if (job.lost) {
        // The job returned although its connection is gone: nothing was committed.
        releaseError = job.lost;
        return { outcome: 'failed', error: job.lost };
      }

      let committed: { command?: string };
      try {
        committed = (await client.query('COMMIT')) as { command?: string };
      } catch (error) {
        // Without an answer from the server (no SQLSTATE) or with the connection gone, nobody knows whether
        // the commit record was written before the cut.
        if (job.lost || connectionLost(error) || sqlState(error) === undefined) {
          releaseError = job.lost ?? (error as Error);
          return {
            outcome: 'failed',
            error: new CommitOutcomeUnknownError(
              'the connection to PostgreSQL broke while COMMIT was in flight: the write may or may not have been committed',
              { cause: error },
            ),
          };
        }
        // PostgreSQL answered COMMIT with an error (a deferred constraint, a serialization failure found at
        // commit): the transaction is rolled back and the connection is fine.
        return { outcome: isRetryable(error) ? 'retry' : 'failed', error };
      }
      if (committed.command !== 'COMMIT') {
        // The job caught a failed statement and returned: PostgreSQL ends an aborted transaction's COMMIT with
        // ROLLBACK. A swallowed serialization failure or deadlock is still one: run the job again.
        if (job.retryableStatement !== undefined) return { outcome: 'retry', error: job.retryableStatement };
        const error = new Error(
          'the write job returned, but a statement in it had failed, so PostgreSQL rolled the transaction back',
          { cause: job.failedStatement },
        );
        return { outcome: 'failed', error };
      }
      return { outcome: 'committed', value, effects: job.effects };
    } catch (error) {
      // BEGIN failed: the connection broke or the server refused. Pipelined, the job ran and saw it fail too.
      releaseError = job.lost ?? (connectionLost(error) ? (error as Error) : undefined);
      return { outcome: 'failed', error };
    } finally {
      job.end(releaseError);
    }
  }

  /**
   * One run of a job that sends at most one statement (`WriteOptions.oneStatement`), without `BEGIN` and
   * `COMMIT`: PostgreSQL makes a statement sent alone its own transaction, committed (and, with
   * `synchronous_commit` on, flushed) before it answers, or rolled back whole when it fails. So an answered
   * statement is committed, and a failed one wrote nothing; a connection that broke while the statement was in
   * flight leaves its outcome unknown, as a `COMMIT` in flight does; one already known lost when the job came
   * to its statement never sent it (`JobClient`), so the job fails with the loss. A second statement is refused
   * (the first is already committed, so the two could not be one transaction) and fails the job.
   */
  private async attemptOneStatement<T>(
    work: (tx: R, context: WriteContext) => Promise<T>,
  ): Promise<Attempt<T>> {
    const job = new JobClient(await this.pool.connect(), 1);
    try {
      let value: T;
      try {
        value = await Promise.resolve().then(() => work(this.bind(job.queryable), job.context));
      } catch (error) {
        // Unknown only while a statement that was sent awaits its answer: a connection lost before the
        // statement went out (or after it was answered) leaves no doubt about what was written.
        if (job.unanswered) return cutInFlight(error);
        const retry = isRetryable(error) || job.retryableStatement !== undefined;
        return { outcome: retry ? 'retry' : 'failed', error };
      }
      if (job.failedStatement !== undefined) {
        // The job caught its statement's failure and returned. Cut in flight: unknown, as when it throws. The
        // connection lost before it went out: nothing was written, and the loss is the reason (503, not 500).
        if (job.unanswered) return cutInFlight(job.failedStatement);
        if (job.lost) return { outcome: 'failed', error: job.lost };
        // Otherwise PostgreSQL refused it: nothing was written, so the job must not say it was.
        const error = new Error(
          'the write job returned, but its statement had failed, so nothing was written',
          {
            cause: job.failedStatement,
          },
        );
        return { outcome: 'failed', error };
      }
      return { outcome: 'committed', value, effects: job.effects };
    } finally {
      job.end();
    }
  }

  /** Rolls back after a failed job; answers an error when the client must be closed rather than reused. */
  private async rollback(client: pg.PoolClient, lost: () => Error | undefined): Promise<Error | undefined> {
    if (lost()) return lost();
    try {
      await client.query('ROLLBACK');
      return lost();
    } catch (error) {
      return lost() ?? (error as Error);
    }
  }
}
