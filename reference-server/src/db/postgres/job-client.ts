import type pg from 'pg';
import type { WriteContext } from '../repositories.ts';
import { connectionLost, isRetryable, isUniqueViolation, sqlState } from './postgres-errors.ts';
import type { Queryable } from './postgres-runner.ts';

/**
 * One attempt of a write job on its pool client, as `PostgresWriteQueue` runs it: what the job's repositories
 * send through (`queryable`, refused once the attempt is over, so that a query the job forgot to await never
 * runs in the next job's transaction on this client), its `afterCommit` effects, and what the attempt learnt of
 * its statements, even those whose errors the job caught: the first failure, the first retryable one, a lost
 * connection, an answer still awaited. `maxStatements` refuses the statement past it (a one-statement job).
 *
 * @example
 * const job = new JobClient(await pool.connect());
 * try { await work(bind(job.queryable), job.context); } finally { job.end(); }
 */
export class JobClient {
  /** The connection's loss, seen by a statement or emitted by the client (the pool listens only to idle ones). */
  lost: Error | undefined;
  /** The first statement that failed, so a swallowed one still decides the outcome. */
  failedStatement: unknown;
  /** The first serialization failure, deadlock or duplicate key, even if the job caught it. */
  retryableStatement: unknown;
  /**
   * Statements sent whose answer (or the server's error) has not come back: several at once when the job sends
   * them together on a pipelined client. Not counted: a statement refused because the connection was already
   * known lost, which never left.
   */
  private awaited = 0;
  readonly effects: Array<() => void> = [];
  /** What the job asked to send with its `COMMIT` (`WriteContext.beforeCommit`), in the order asked. */
  readonly withCommit: Array<(connection: Queryable) => Promise<void>> = [];
  readonly queryable: Queryable;
  readonly context: WriteContext;
  private open = true;
  private sent = 0;
  private readonly onError = (error: Error) => {
    this.lost ??= error;
  };

  constructor(
    readonly client: pg.PoolClient,
    private readonly maxStatements = Number.POSITIVE_INFINITY,
  ) {
    client.on('error', this.onError);
    this.queryable = { query: (text, values) => this.send(text, values) };
    const { effects, withCommit } = this;
    const isOpen = () => this.open;
    const afterCommit: WriteContext['afterCommit'] = (effect) => {
      if (!isOpen()) throw new Error('afterCommit called after the write job ended');
      effects.push(effect);
    };
    const beforeCommit: WriteContext['beforeCommit'] = (send) => {
      if (!isOpen()) throw new Error('beforeCommit called after the write job ended');
      withCommit.push(send);
    };
    // A one-statement job has no COMMIT to send anything with: it gets afterCommit alone, as on SQLite.
    this.context =
      maxStatements === Number.POSITIVE_INFINITY ? { afterCommit, beforeCommit } : { afterCommit };
  }

  /** A statement was sent and its answer, or the server's error, has not come back. */
  get unanswered(): boolean {
    return this.awaited > 0;
  }

  /**
   * The client writes a statement without waiting for the answers to those before it (`pipeline: true` on
   * the pool): statements the job sends together leave together.
   */
  get pipelined(): boolean {
    return (this.client as unknown as { pipeline?: boolean }).pipeline === true;
  }

  /**
   * Sends what the job asked to send with its `COMMIT`, without waiting for the answers: on a pipelined client
   * they leave with the `COMMIT` the caller sends next. Their failures reach the job's outcome through the
   * transaction (a refused statement aborts it, and `COMMIT` answers `ROLLBACK`); each sender handles its own
   * promise, and a rejection it let through is ignored here rather than left unhandled.
   */
  sendWithCommit(): void {
    for (const send of this.withCommit.splice(0)) {
      // Called now, not in a later tick, so that its statement is written before the COMMIT behind it.
      let sending: Promise<void>;
      try {
        sending = send(this.queryable);
      } catch (error) {
        sending = Promise.reject(error);
      }
      sending.catch(() => undefined);
    }
  }

  /** The job is over: its queryable, `afterCommit` and `beforeCommit` refuse from now on. */
  close(): void {
    this.open = false;
  }

  /** Closes, and gives the client back: with an error the pool closes it rather than lend it again. */
  end(releaseError?: Error): void {
    this.open = false;
    this.client.removeListener('error', this.onError);
    this.client.release(releaseError ?? this.lost);
  }

  private send(text: string | pg.QueryConfig, values?: unknown[]): Promise<unknown> {
    if (!this.open) return Promise.reject(new Error('this write job has ended; its transaction is closed'));
    if (++this.sent > this.maxStatements) {
      const error = new Error('a oneStatement write job sent a second statement');
      this.failedStatement ??= error;
      return Promise.reject(error);
    }
    if (this.lost) {
      // The connection is known to be gone (pg would refuse the statement without sending it): not sent, so no
      // answer is awaited, and a one-statement job knows that it wrote nothing.
      this.failedStatement ??= this.lost;
      return Promise.reject(this.lost);
    }
    this.awaited++;
    return (this.client.query(text as pg.QueryConfig, values) as Promise<unknown>).then(
      (answer) => {
        this.awaited--;
        return answer;
      },
      (error: unknown) => {
        this.failedStatement ??= error;
        // Known here, even if the job swallows the error and returns before the socket's end is seen.
        if (connectionLost(error)) this.lost ??= error as Error;
        else if (sqlState(error) !== undefined) this.awaited--;
        if (isRetryable(error) || isUniqueViolation(error)) this.retryableStatement ??= error;
        throw error;
      },
    );
  }
}
