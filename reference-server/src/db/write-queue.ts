import type { SqliteDatabase } from './database.ts';
import type { Repositories, WriteContext, Writes } from './repositories.ts';
import { runEffects } from './run-effects.ts';

export type { WriteContext } from './repositories.ts';

type Job<R> = {
  work: (tx: R, context: WriteContext) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};

type Outcome = { ok: true; value: unknown; effects: Array<() => void> } | { ok: false; error: unknown };

/**
 * Group commit on SQLite. Every write a request or a background job of the running service makes goes through
 * `run` (the simulated bank's own books and the migrations write in their own transactions, outside the
 * request path): jobs that arrive in the same turn of the event loop run one after another inside one
 * transaction, each in its own savepoint (a job that throws rolls back only itself), and the batch is
 * committed with one fsync. A job's promise settles only after that commit, so nothing is acknowledged before
 * it is durable, and N concurrent requests cost one fsync instead of N.
 *
 * Jobs are asynchronous because PostgreSQL's are (`Writes`), but on SQLite every repository call inside one
 * resumes in a microtask (`SqliteRunner` runs each statement synchronously), so a batch runs start to commit
 * within one turn of the event loop: no request handler runs in between (none sees a batch's uncommitted rows
 * on this shared connection) and a job still sees every earlier job's writes with no other job interleaving
 * (read-check-write inside a job is race-free). A job must therefore never await anything but the store.
 *
 * @example
 * const queue = new WriteQueue(db, repositories, (error) => logger.error('effect failed', { error }));
 * await queue.run(async (tx, context) => { await tx.sessions.insert(row); context.afterCommit(notify); });
 */
export class WriteQueue<R = Repositories> implements Writes<R> {
  private pending: Array<Job<R>> = [];
  private scheduled = false;
  private readonly statements;

  constructor(
    private readonly db: SqliteDatabase,
    /** The repositories a job gets: on SQLite, those of this same connection. */
    private readonly tx: R,
    /** Told of an after-commit effect that threw (or whose promise rejected); the write stays committed. */
    private readonly onEffectError: (error: unknown) => void,
    private readonly maxBatch = 512,
    /** Told after each batch is committed (the service's WAL checkpointer counts them). */
    private readonly afterCommit: () => void = () => {},
  ) {
    this.statements = {
      // IMMEDIATE: the write lock is taken at BEGIN, waiting out another process's write (the CLI on the same
      // file) for the busy timeout. A deferred BEGIN takes it at the first write, and in WAL mode a transaction
      // whose snapshot another process wrote past is refused at once (SQLITE_BUSY, no waiting): two
      // `business create` runs on one new file saw "database is locked" so.
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT job'),
      release: db.prepare('RELEASE job'),
      rollbackTo: db.prepare('ROLLBACK TO job'),
    };
  }

  run<T>(work: (tx: R, context: WriteContext) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    const outcomes: Outcome[] = [];
    let commitError: unknown;
    try {
      this.statements.begin.run();
      for (const job of batch) outcomes.push(await this.runInSavepoint(job));
      this.statements.commit.run();
    } catch (error) {
      // The commit itself failed (disk full, I/O error), or a job's statement did and SQLite rolled the whole
      // transaction back with it (see runInSavepoint): nothing of this batch is durable.
      commitError = error;
      if (this.db.inTransaction) this.statements.rollback.run();
    }
    if (commitError === undefined) {
      // Outside the try above: whatever it does, the batch is committed and its jobs are told so.
      try {
        this.afterCommit();
      } catch (error) {
        this.onEffectError(error);
      }
    }
    // The next batch starts only after this one ended: two never share the transaction.
    this.scheduled = this.pending.length > 0;
    if (this.scheduled) setImmediate(() => void this.flush());
    batch.forEach((job, index) => {
      const outcome = outcomes[index];
      if (commitError !== undefined || !outcome) job.reject(commitError);
      else if (outcome.ok) {
        job.resolve(outcome.value);
        runEffects(outcome.effects, this.onEffectError);
      } else job.reject(outcome.error);
    });
  }

  private async runInSavepoint(job: Job<R>): Promise<Outcome> {
    const effects: Array<() => void> = [];
    this.statements.savepoint.run();
    let value: unknown;
    try {
      value = await job.work(this.tx, { afterCommit: (effect) => effects.push(effect) });
    } catch (error) {
      // SQLite answers some failures (SQLITE_FULL, an I/O error) by rolling back the whole transaction, not
      // only the statement: then there is no savepoint to return to, and the jobs before this one are undone
      // too. The batch fails with this job's error, which says why (a full disk answers 503, not 500).
      if (!this.db.inTransaction) throw error;
      this.statements.rollbackTo.run();
      this.statements.release.run();
      return { ok: false, error };
    }
    // The job caught such a failure itself and returned: what it wrote before is gone with the transaction.
    if (!this.db.inTransaction) throw new TransactionRolledBackError();
    this.statements.release.run();
    return { ok: true, value, effects };
  }
}

/**
 * A write job returned normally although SQLite had rolled its batch's transaction back under it (a statement
 * failed with `SQLITE_FULL` or an I/O error and the job caught the error): nothing of the batch was written, and
 * every job of it is told so with this error.
 */
export class TransactionRolledBackError extends Error {
  override readonly name = 'TransactionRolledBackError';
  constructor() {
    super(
      'SQLite rolled back the write batch after a statement failed inside a job that went on; nothing was written',
    );
  }
}
