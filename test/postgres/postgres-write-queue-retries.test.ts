import { describe, expect, it } from 'vitest';
import { CommitOutcomeUnknownError } from '../../reference-server/src/db/postgres/postgres-errors.ts';
import type { PostgresWriteQueue } from '../../reference-server/src/db/postgres/postgres-write-queue.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { barrier, type TestTx, useWriteQueueHarness } from '../support/write-queue-harness.ts';

// What the queue runs again and what it does not: a deadlock (40P01) or serialization failure (40001) is retried
// up to maxAttempts, each effect running once; a duplicate key is retried and then refused (23505); a COMMIT the
// server refuses, or a statement that failed inside the job, rejects without a retry. The setup, and the leak
// check after every test, are in test/support/write-queue-harness.ts.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('PostgresWriteQueue on a real PostgreSQL', () => {
  const harness = useWriteQueueHarness();
  const { queue, committed } = harness;

  /** Two jobs updating two rows in opposite order, both holding their first lock before taking the second. */
  const deadlockingJobs = (writes: PostgresWriteQueue<TestTx>, { swallow = false } = {}) => {
    const bothHoldTheirFirstRow = barrier(2);
    const attempts = { a: 0, b: 0 };
    const effects: string[] = [];
    const job = (name: 'a' | 'b', first: string, second: string, amount: number) =>
      writes.run(async (tx, context) => {
        attempts[name] += 1;
        context.afterCommit(() => effects.push(name));
        await tx.rows('UPDATE counters SET value = value + $2 WHERE id = $1', [first, amount]);
        if (attempts[name] === 1) await bothHoldTheirFirstRow.arrive();
        const secondUpdate = tx.rows('UPDATE counters SET value = value + $2 WHERE id = $1', [
          second,
          amount,
        ]);
        // A job that catches the deadlock and returns as if nothing happened.
        await (swallow ? secondUpdate.catch(() => []) : secondUpdate);
        return name;
      });
    const outcomes = Promise.allSettled([job('a', 'left', 'right', 1), job('b', 'right', 'left', 10)]);
    return { outcomes, attempts, effects };
  };

  it('a real deadlock (two jobs locking two rows in opposite order) is retried to success, effects run once each', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('left', 0), ('right', 0)");
    const { outcomes, attempts, effects } = deadlockingJobs(queue());
    expect(await outcomes).toEqual([
      { status: 'fulfilled', value: 'a' },
      { status: 'fulfilled', value: 'b' },
    ]);
    // PostgreSQL broke the deadlock by failing one of them (after deadlock_timeout), which ran again. Usually
    // that is three runs in all; a clean-clone CI run on a loaded machine saw four, so the count is a floor:
    // what must hold exactly is the money below and one effect per job.
    expect(attempts.a + attempts.b).toBeGreaterThanOrEqual(3);
    expect(await committed('SELECT id, value FROM counters ORDER BY id')).toEqual([
      { id: 'left', value: 11 },
      { id: 'right', value: 11 },
    ]);
    // The failed attempt's effect was dropped.
    expect(effects.sort()).toEqual(['a', 'b']);
  });

  it('a deadlock the job caught and swallowed is still retried (its COMMIT came back as ROLLBACK)', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('left', 0), ('right', 0)");
    const { outcomes, attempts, effects } = deadlockingJobs(queue(), { swallow: true });
    expect(await outcomes).toEqual([
      { status: 'fulfilled', value: 'a' },
      { status: 'fulfilled', value: 'b' },
    ]);
    expect(attempts.a + attempts.b).toBeGreaterThanOrEqual(3);
    expect(await committed('SELECT id, value FROM counters ORDER BY id')).toEqual([
      { id: 'left', value: 11 },
      { id: 'right', value: 11 },
    ]);
    expect(effects.sort()).toEqual(['a', 'b']);
  });

  it('maxAttempts 1: the deadlock victim rejects with 40P01, nothing of it committed, the other job commits', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('left', 0), ('right', 0)");
    const { outcomes, attempts, effects } = deadlockingJobs(queue(harness.poolA, { maxAttempts: 1 }));
    const settled = await outcomes;
    const rejected = settled.filter((outcome) => outcome.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toMatchObject({ code: '40P01' });
    const winner = settled.findIndex((outcome) => outcome.status === 'fulfilled') === 0 ? 'a' : 'b';
    const amount = winner === 'a' ? 1 : 10;
    expect(await committed('SELECT id, value FROM counters ORDER BY id')).toEqual([
      { id: 'left', value: amount },
      { id: 'right', value: amount },
    ]);
    expect(attempts).toEqual({ a: 1, b: 1 });
    expect(effects).toEqual([winner]);
  });

  it('maxAttempts exhausted: a job overtaken on every run rejects with the 40001 after exactly maxAttempts runs', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('contended', 0)");
    const writes = queue(harness.poolA, { isolation: 'repeatable read', maxAttempts: 3 });
    let attempts = 0;
    let effects = 0;
    const outcome = writes.run(async (tx, context) => {
      attempts += 1;
      context.afterCommit(() => {
        effects += 1;
      });
      await tx.rows("SELECT value FROM counters WHERE id = 'contended'");
      // Another writer commits a change to the row after this job's snapshot, every time.
      await committed("UPDATE counters SET value = value + 100 WHERE id = 'contended'");
      await tx.rows("UPDATE counters SET value = value + 1 WHERE id = 'contended'");
    });
    await expect(outcome).rejects.toMatchObject({ code: '40001' });
    expect(attempts).toBe(3);
    expect(effects).toBe(0);
    expect(await committed("SELECT value FROM counters WHERE id = 'contended'")).toEqual([{ value: 300 }]);
  });

  it('a job that catches a failed statement and returns is rejected: PostgreSQL rolled it back at COMMIT', async () => {
    await harness.admin.query("INSERT INTO orders (id, status) VALUES ('order-2', 'pending')");
    const writes = queue();
    let effects = 0;
    const outcome = writes.run(async (tx, context) => {
      context.afterCommit(() => {
        effects += 1;
      });
      await tx.rows("INSERT INTO journal (job) VALUES ('swallowed')");
      // A failure that is not a duplicate key (those are retried): a bad cast.
      await tx.rows("SELECT 'not a number'::int").catch(() => []);
      return 'looks fine';
    });
    const error = await outcome.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).cause).toMatchObject({ code: '22P02' });
    expect(effects).toBe(0);
    expect(await committed('SELECT job FROM journal')).toEqual([]);
  });

  it('a true duplicate key is refused on every run and rejects with 23505 after maxAttempts', async () => {
    await harness.admin.query("INSERT INTO orders (id, status) VALUES ('order-2', 'pending')");
    const writes = queue(harness.poolA, { maxAttempts: 3 });
    let attempts = 0;
    const duplicate = writes.run(async (tx) => {
      attempts += 1;
      await tx.rows("INSERT INTO orders (id, status) VALUES ('order-2', 'pending')");
    });
    await expect(duplicate).rejects.toMatchObject({ code: '23505' });
    expect(attempts).toBe(3);
  });

  it('a COMMIT refused by the server (a deferred unique check) rejects with that error, not retried, and the client is kept', async () => {
    await harness.admin.query("INSERT INTO tickets (code) VALUES ('T-1')");
    const writes = queue();
    let attempts = 0;
    let effects = 0;
    let pid: number | undefined;
    const outcome = writes.run(async (tx, context) => {
      attempts += 1;
      context.afterCommit(() => {
        effects += 1;
      });
      pid = (await tx.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]?.pid;
      // Accepted for now: the unique check waits for COMMIT.
      await tx.rows("INSERT INTO tickets (code) VALUES ('T-1')");
      await tx.rows("INSERT INTO journal (job) VALUES ('ticket')");
    });
    await expect(outcome).rejects.toMatchObject({ code: '23505' });
    await expect(outcome).rejects.not.toBeInstanceOf(CommitOutcomeUnknownError);
    expect(attempts).toBe(1);
    expect(effects).toBe(0);
    expect(await committed('SELECT job FROM journal')).toEqual([]);
    // The connection was fine: the next job gets the same backend.
    const next = await writes.run(
      async (tx) => (await tx.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]?.pid,
    );
    expect(next).toBe(pid);
  });
});
