import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  CommitOutcomeUnknownError,
  databaseUnavailable,
} from '../../reference-server/src/db/postgres/postgres-errors.ts';
import type { PostgresWriteQueue } from '../../reference-server/src/db/postgres/postgres-write-queue.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { type TestTx, useWriteQueueHarness } from '../support/write-queue-harness.ts';

// One-statement jobs (WriteOptions.oneStatement, issue 38): the statement is its own transaction, a second one
// is refused, and a connection lost in flight or before the statement is told apart (CommitOutcomeUnknownError
// only when the statement may have reached PostgreSQL). The setup, and the leak check after every test, are in
// test/support/write-queue-harness.ts.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('PostgresWriteQueue on a real PostgreSQL', () => {
  const harness = useWriteQueueHarness();
  const { queue, committed, cutSleepingBackend, poolErrors } = harness;

  describe('one-statement jobs (WriteOptions.oneStatement, issue 38)', () => {
    it('commits its one statement as its own transaction: durable when answered, effects after it', async () => {
      const writes = queue();
      const order: string[] = [];
      const job = await writes.run(
        async (tx, context) => {
          context.afterCommit(() => order.push('effect'));
          // now() is the transaction's start, statement_timestamp() this statement's: equal only when the
          // statement is its own transaction (after a BEGIN sent earlier, now() is the BEGIN's).
          const [row] = await tx.rows<{ job: string }>(
            `INSERT INTO journal (job)
             SELECT CASE WHEN now() = statement_timestamp() THEN 'alone' ELSE 'in a transaction' END
             RETURNING job`,
          );
          // Seen by another connection before the job has even returned: there is no COMMIT to wait for.
          order.push(`seen elsewhere: ${(await committed('SELECT job FROM journal')).length}`);
          return row?.job;
        },
        { oneStatement: true },
      );
      expect(job).toBe('alone');
      expect(order).toEqual(['seen elsewhere: 1', 'effect']);
      // The same job without the option runs inside BEGIN … COMMIT.
      const wrapped = await writes.run(async (tx) => {
        await tx.rows('SELECT pg_sleep(0.01)');
        return (
          await tx.rows<{ job: string }>(
            `INSERT INTO journal (job)
             SELECT CASE WHEN now() = statement_timestamp() THEN 'alone' ELSE 'in a transaction' END
             RETURNING job`,
          )
        )[0]?.job;
      });
      expect(wrapped).toBe('in a transaction');
    });

    it('a statement that fails writes nothing, runs no effect, and a duplicate key is run again like any job', async () => {
      const writes = queue(harness.poolA, { maxAttempts: 2 });
      let effects = 0;
      let attempts = 0;
      await harness.admin.query("INSERT INTO orders (id, status) VALUES ('o1', 'pending')");
      const failed = await writes
        .run(
          async (tx, context) => {
            attempts += 1;
            context.afterCommit(() => {
              effects += 1;
            });
            await tx.rows("INSERT INTO orders (id, status) VALUES ('o2', 'pending'), ('o1', 'again')");
          },
          { oneStatement: true },
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failed).toMatchObject({ code: '23505' });
      // Run again (a duplicate key may be another instance's first-time row), refused each time.
      expect(attempts).toBe(2);
      expect(effects).toBe(0);
      // Neither row of the refused statement was written.
      expect(await committed('SELECT id FROM orders ORDER BY id')).toEqual([{ id: 'o1' }]);
    });

    it('a second statement is refused and fails the job (the first, its own transaction, stands)', async () => {
      const writes = queue();
      const failed = await writes
        .run(
          async (tx) => {
            await tx.rows("INSERT INTO journal (job) VALUES ('first')");
            await tx.rows("INSERT INTO journal (job) VALUES ('second')");
          },
          { oneStatement: true },
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect((failed as Error).message).toMatch(/sent a second statement/);
      expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'first' }]);
    });

    it('the connection cut while its statement is in flight: CommitOutcomeUnknownError, never retried, and the pool recovers', async () => {
      const writes = queue();
      let attempts = 0;
      const outcome = writes
        .run(
          async (tx) => {
            attempts += 1;
            await tx.rows("INSERT INTO journal (job) SELECT 'slow' FROM pg_sleep(30)");
          },
          { oneStatement: true },
        )
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      await cutSleepingBackend();
      const error = await outcome;
      expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
      expect(attempts).toBe(1);
      expect(await committed('SELECT job FROM journal')).toEqual([]);
      await writes.run(async (tx) => tx.rows("INSERT INTO journal (job) VALUES ('after')"), {
        oneStatement: true,
      });
      expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'after' }]);
    });
  });

  it('a one-statement job that swallows its statement cut in flight and returns: still CommitOutcomeUnknownError (503), not "nothing was written"', async () => {
    const writes = queue();
    let attempts = 0;
    const outcome = writes
      .run(
        async (tx) => {
          attempts += 1;
          await tx.rows("INSERT INTO journal (job) SELECT 'slow' FROM pg_sleep(30)").catch(() => []);
          return 'looks fine';
        },
        { oneStatement: true },
      )
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    await cutSleepingBackend();
    const error = await outcome;
    expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
    expect(databaseUnavailable(error)).toBe(true);
    expect(attempts).toBe(1);
    expect(await committed('SELECT job FROM journal')).toEqual([]);
  });

  // A one-statement job whose connection is already dead when it comes to its statement. What happens depends on
  // when the client learns of it; in none of these cases does PostgreSQL receive the statement.
  describe('one-statement jobs on a connection lost before the statement (issue 38)', () => {
    const pgModule = createRequire(import.meta.url).resolve('pg');

    /** The backend of the client the next job takes: a job releases its client last into the idle list, and
     * the pool lends the last one released first. */
    const nextClientPid = async (writes: PostgresWriteQueue<TestTx>) =>
      (
        await writes.run(
          async (tx) => (await tx.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0],
          {
            oneStatement: true,
          },
        )
      )?.pid;

    const backendGone = async (pid: number | undefined) => {
      for (let i = 0; i < 100; i++) {
        if ((await committed('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`backend ${pid} still there`);
    };

    const recordPid = (tx: TestTx, job: string) =>
      tx.rows<{ pid: number }>('INSERT INTO journal (job) VALUES ($1) RETURNING pg_backend_pid() AS pid', [
        job,
      ]);

    it('terminated while idle in the pool: the pool drops the client, and the job commits once on another connection', async () => {
      const writes = queue();
      const pid = await nextClientPid(writes);
      const errorsBefore = poolErrors.length;
      await committed('SELECT pg_terminate_backend($1)', [pid]);
      await backendGone(pid);
      // The idle client read PostgreSQL's FATAL; the pool's error listener took it out of the idle list.
      for (let i = 0; i < 100 && poolErrors.length === errorsBefore; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(poolErrors.slice(errorsBefore)).toMatchObject([{ code: '57P01' }]);

      let attempts = 0;
      const [row] = await writes.run(
        async (tx) => {
          attempts += 1;
          return recordPid(tx, 'after the kill');
        },
        { oneStatement: true },
      );
      expect(attempts).toBe(1);
      expect(row?.pid).not.toBe(pid);
      expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'after the kill' }]);
    });

    it("terminated while idle but not yet seen when the job takes it: the statement goes out on the dead socket and PostgreSQL's FATAL comes back as its answer, which the queue cannot tell from a statement cut in flight: CommitOutcomeUnknownError, not retried, nothing written", async () => {
      const writes = queue();
      const pid = await nextClientPid(writes);
      // Terminated from another process while this one's event loop is blocked, until the backend has exited:
      // the FATAL waits unread in the idle client's socket, so the pool still lends it.
      execFileSync(process.execPath, [
        '-e',
        `const pg = require(${JSON.stringify(pgModule)});
         (async () => {
           const admin = new pg.Client({ connectionString: ${JSON.stringify(harness.url)} });
           await admin.connect();
           await admin.query('SELECT pg_terminate_backend($1)', [${pid}]);
           for (let i = 0; i < 100; i++) {
             const { rows } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [${pid}]);
             if (rows.length === 0) break;
             await new Promise((resolve) => setTimeout(resolve, 20));
           }
           await admin.end();
         })();`,
      ]);
      let attempts = 0;
      const error = await writes
        .run(
          async (tx) => {
            attempts += 1;
            return recordPid(tx, 'on the dead socket');
          },
          { oneStatement: true },
        )
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
      expect(databaseUnavailable(error)).toBe(true);
      expect(attempts).toBe(1);
      expect(await committed('SELECT job FROM journal')).toEqual([]);
      await writes.run(async (tx) => recordPid(tx, 'next'), { oneStatement: true });
      expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'next' }]);
    });

    it('lost after the job took its client and before its statement: the statement is never sent, so the job fails with the lost connection (503), not CommitOutcomeUnknownError, and is not retried', async () => {
      const writes = queue();
      const pid = await nextClientPid(writes);
      let attempts = 0;
      const error = await writes
        .run(
          async (tx) => {
            attempts += 1;
            // Work before the statement, during which the backend is terminated and the client hears of it.
            await committed('SELECT pg_terminate_backend($1)', [pid]);
            await backendGone(pid);
            await new Promise((resolve) => setTimeout(resolve, 20));
            return recordPid(tx, 'never sent');
          },
          { oneStatement: true },
        )
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(CommitOutcomeUnknownError);
      // The error handler answers it 503 service_unavailable, as any lost connection.
      expect(databaseUnavailable(error)).toBe(true);
      expect(error).toMatchObject({ code: '57P01' });
      expect(attempts).toBe(1);
      expect(await committed('SELECT job FROM journal')).toEqual([]);
      const [row] = await writes.run(async (tx) => recordPid(tx, 'next'), { oneStatement: true });
      expect(row?.pid).not.toBe(pid);
      expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'next' }]);
    });

    it('the same, the job swallowing the refusal and returning: it fails with the lost connection (503), not a 500', async () => {
      const writes = queue();
      const pid = await nextClientPid(writes);
      const error = await writes
        .run(
          async (tx) => {
            await committed('SELECT pg_terminate_backend($1)', [pid]);
            await backendGone(pid);
            await new Promise((resolve) => setTimeout(resolve, 20));
            await recordPid(tx, 'never sent').catch(() => []);
            return 'looks fine';
          },
          { oneStatement: true },
        )
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      expect(error).not.toBeInstanceOf(CommitOutcomeUnknownError);
      expect(error).toMatchObject({ code: '57P01' });
      expect(databaseUnavailable(error)).toBe(true);
      expect(await committed('SELECT job FROM journal')).toEqual([]);
    });
  });
});
