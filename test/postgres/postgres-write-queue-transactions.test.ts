import { describe, expect, it } from 'vitest';
import { openPool } from '../support/open-pool.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { type TestTx, useWriteQueueHarness } from '../support/write-queue-harness.ts';

// One transaction per job on a pool client: the job's writes commit together or not at all, its afterCommit
// effects run after COMMIT (in order, each failure reported), a burst far beyond the pool waits for a client, and
// a job cannot reach its client once it has ended. The setup, and the leak check after every test, are in
// test/support/write-queue-harness.ts.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('PostgresWriteQueue on a real PostgreSQL', () => {
  const harness = useWriteQueueHarness();
  const { queue, committed, effectErrors } = harness;

  it('commits, then runs the effects in the order registered; one that throws is reported and the rest still run', async () => {
    const writes = queue();
    const effects: string[] = [];
    let seenByAnotherConnection: Promise<Array<{ value: number }>> | undefined;
    const boom = new Error('push failed');

    const value = await writes.run(async (tx, context) => {
      await tx.rows("INSERT INTO counters (id, value) VALUES ('c1', 7)");
      context.afterCommit(() => {
        effects.push('first');
        // Started inside the effect, on another connection: it can see the row only if COMMIT came first.
        seenByAnotherConnection = committed<{ value: number }>("SELECT value FROM counters WHERE id = 'c1'");
      });
      context.afterCommit(() => {
        effects.push('second');
        throw boom;
      });
      context.afterCommit(() => {
        effects.push('third');
      });
      await tx.rows("INSERT INTO journal (job) VALUES ('c1')");
      // Nothing runs before the commit.
      expect(effects).toEqual([]);
      return 'done';
    });

    expect(value).toBe('done');
    // All three ran before the job's promise resolved, in order, the throwing one included.
    expect(effects).toEqual(['first', 'second', 'third']);
    expect(await seenByAnotherConnection).toEqual([{ value: 7 }]);
    expect(effectErrors).toEqual([boom]);
    expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'c1' }]);
  });

  it('an async effect that rejects is reported too, not left unhandled, and the committed write stays', async () => {
    const writes = queue();
    const failure = new Error('webhook enqueue failed');
    const ran: string[] = [];
    const value = await writes.run(async (tx, context) => {
      await tx.rows("INSERT INTO journal (job) VALUES ('async-effect')");
      context.afterCommit(async () => {
        throw failure;
      });
      context.afterCommit(() => ran.push('next effect'));
      return 'done';
    });
    expect(value).toBe('done');
    await new Promise((resolve) => setImmediate(resolve));
    expect(effectErrors).toEqual([failure]);
    expect(ran).toEqual(['next effect']);
    expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'async-effect' }]);
  });

  it('a job that throws is rolled back alone, with its own error and without its effects, while 19 concurrent jobs commit', async () => {
    const writes = queue();
    const effects: number[] = [];
    const refused = new Error('amount does not match');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        writes.run(async (tx, context) => {
          context.afterCommit(() => effects.push(i));
          await tx.rows('INSERT INTO journal (job) VALUES ($1)', [`job-${i}`]);
          if (i === 7) throw refused;
          return i;
        }),
      ),
    );
    expect(outcomes[7]).toEqual({ status: 'rejected', reason: refused });
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(19);
    const jobs = (await committed<{ job: string }>('SELECT job FROM journal')).map((row) => row.job);
    expect(jobs.sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `job-${i}`)
        .filter((job) => job !== 'job-7')
        .sort(),
    );
    expect(effects.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== 7),
    );
  });

  it('statements a job sends together (the pool pipelines) run in the order sent, in its transaction; one that fails rolls all back', async () => {
    const writes = queue();
    const together = await writes.run((tx) =>
      Promise.all([
        tx.rows("INSERT INTO counters (id, value) VALUES ('p1', 1)"),
        tx.rows("UPDATE counters SET value = value + 1 WHERE id = 'p1' RETURNING value"),
        tx.rows("INSERT INTO journal (job) VALUES ('p1')"),
        // Sent with the writes before it, answered after them: it sees them, as the next statement would.
        tx.rows<{ value: number; jobs: number }>(
          "SELECT value, (SELECT count(*)::int FROM journal WHERE job = 'p1') AS jobs FROM counters WHERE id = 'p1'",
        ),
      ]),
    );
    expect(together[1]).toEqual([{ value: 2 }]);
    expect(together[3]).toEqual([{ value: 2, jobs: 1 }]);

    // The second statement fails: the job rejects with its error (not the "transaction is aborted" of the one
    // behind it), and the first statement, already run, is rolled back with the rest.
    const failed = writes.run((tx) =>
      Promise.all([
        tx.rows("INSERT INTO journal (job) VALUES ('p2')"),
        tx.rows("INSERT INTO counters (id, value) VALUES ('p2', NULL)"),
        tx.rows("INSERT INTO journal (job) VALUES ('p3')"),
      ]),
    );
    await expect(failed).rejects.toMatchObject({ code: '23502', column: 'value' });
    expect(await committed('SELECT job FROM journal ORDER BY seq')).toEqual([{ job: 'p1' }]);
    expect(await committed('SELECT id, value FROM counters')).toEqual([{ id: 'p1', value: 2 }]);
  });

  it('what a job sends with its COMMIT (beforeCommit) runs after its statements and commits or rolls back with it', async () => {
    const writes = queue();
    await writes.run(async (tx, context) => {
      await tx.rows("INSERT INTO journal (job) VALUES ('first')");
      // Run after the job returned, in its transaction: it sees the job's row, and commits with it.
      context.beforeCommit?.(async (connection) => {
        await connection.query("INSERT INTO journal (job) SELECT 'after ' || count(*) FROM journal");
      });
      await tx.rows("INSERT INTO journal (job) VALUES ('second')");
    });
    expect(await committed('SELECT job FROM journal ORDER BY seq')).toEqual([
      { job: 'first' },
      { job: 'second' },
      { job: 'after 2' },
    ]);

    // PostgreSQL refuses it: the transaction is aborted, COMMIT answers ROLLBACK, the job fails, nothing stays.
    const refused = writes.run(async (tx, context) => {
      await tx.rows("INSERT INTO journal (job) VALUES ('third')");
      context.beforeCommit?.(async (connection) => {
        await connection.query("INSERT INTO counters (id, value) VALUES ('c', NULL)").catch(() => undefined);
      });
    });
    await expect(refused).rejects.toThrow(/rolled the transaction back/);

    // A job that throws sends nothing with a COMMIT it never reaches.
    let sent = false;
    const thrown = writes.run(async (_tx, context) => {
      context.beforeCommit?.(async (connection) => {
        sent = true;
        await connection.query("INSERT INTO journal (job) VALUES ('never')");
      });
      throw new Error('refused by the job');
    });
    await expect(thrown).rejects.toThrow('refused by the job');
    expect(sent).toBe(false);
    expect(await committed('SELECT count(*)::int AS rows FROM journal')).toEqual([{ rows: 3 }]);

    // A one-statement job has no COMMIT to send anything with.
    const offered = await writes.run(async (_tx, context) => context.beforeCommit, { oneStatement: true });
    expect(offered).toBeUndefined();
  });

  it('a burst of jobs far beyond the pool waits its turn: none fails for the time it queued for a client', async () => {
    // A pool of 2 whose connect gives up after 300 ms, and 200 jobs of about 10 ms each sent at once: about a
    // second of work. Left to queue in the pool, every job still waiting for a client after 300 ms failed
    // ("timeout exceeded when trying to connect"), as 1,000 sessions made at once did on a loaded CI run.
    const small = openPool(harness.url, { max: 2, connectionTimeoutMillis: 300 }, harness.onPoolError);
    try {
      const writes = queue(small);
      const jobs = Array.from({ length: 200 }, (_, n) =>
        writes.run(async (tx) => {
          await tx.rows('SELECT pg_sleep(0.01)');
          await tx.rows('INSERT INTO journal (job) VALUES ($1)', [`burst-${n}`]);
          return n;
        }),
      );
      const settled = await Promise.allSettled(jobs);
      expect(settled.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      expect(await committed('SELECT count(*)::int AS jobs FROM journal')).toEqual([{ jobs: 200 }]);
    } finally {
      await small.end();
    }
  });

  it('a query the job forgot to await cannot run after the job ended, nor an effect be added', async () => {
    const writes = queue();
    let kept: TestTx | undefined;
    let keptContext: { afterCommit(effect: () => void): void } | undefined;
    await writes.run(async (tx, context) => {
      kept = tx;
      keptContext = context;
    });
    // The client is back in the pool (perhaps in another job's transaction): the old `tx` must not reach it.
    await expect(kept?.rows("INSERT INTO journal (job) VALUES ('late')")).rejects.toThrow(/ended/);
    expect(() => keptContext?.afterCommit(() => {})).toThrow(/ended/);
    expect(await committed('SELECT job FROM journal')).toEqual([]);
  });
});
