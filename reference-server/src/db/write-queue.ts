import type { SqliteDatabase } from './database.ts';

/** Handed to each write job: work to run only once the job's writes are durable (push, bank calls). */
export interface WriteContext {
  afterCommit(effect: () => void): void;
}

type Job = {
  work: (context: WriteContext) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};

/**
 * Group commit. Every write a request or a background job of the running service makes goes through `run`
 * (the CLI's onboarding commands, the simulated bank's own books and the migrations write in their own
 * transactions, outside the request path): jobs that arrive in the same turn of the event
 * loop run one after another inside one transaction, each in its own savepoint (a job that throws rolls back
 * only itself), and the batch is committed with one fsync. A job's promise settles only after that commit,
 * so nothing is acknowledged before it is durable, and N concurrent requests cost one fsync instead of N.
 *
 * Jobs are synchronous: better-sqlite3 runs them on this thread, so a job sees every earlier job's writes and
 * no other job interleaves with it (read-check-write inside a job is race-free).
 */
export class WriteQueue {
  private pending: Job[] = [];
  private scheduled = false;

  constructor(
    private readonly db: SqliteDatabase,
    /** Told of an after-commit effect that threw; the write itself is committed and stays so. */
    private readonly onEffectError: (error: unknown) => void,
    private readonly maxBatch = 512,
  ) {}

  run<T>(work: (context: WriteContext) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    if (this.pending.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const outcomes: Array<
      { ok: true; value: unknown; effects: Array<() => void> } | { ok: false; error: unknown }
    > = [];
    try {
      this.db.transaction(() => {
        for (const job of batch) {
          const effects: Array<() => void> = [];
          try {
            // A nested better-sqlite3 transaction is a savepoint: a throw undoes this job alone.
            const value = this.db.transaction(() =>
              job.work({ afterCommit: (effect) => effects.push(effect) }),
            )();
            outcomes.push({ ok: true, value, effects });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (commitError) {
      // The commit itself failed (disk full, I/O error): nothing of this batch is durable.
      for (const job of batch) job.reject(commitError);
      return;
    }
    batch.forEach((job, index) => {
      const outcome = outcomes[index];
      if (!outcome) return;
      if (outcome.ok) {
        job.resolve(outcome.value);
        for (const effect of outcome.effects) {
          try {
            effect();
          } catch (error) {
            this.onEffectError(error);
          }
        }
      } else {
        job.reject(outcome.error);
      }
    });
  }
}
