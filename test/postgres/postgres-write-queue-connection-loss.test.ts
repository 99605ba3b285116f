import { describe, expect, it } from 'vitest';
import { CommitOutcomeUnknownError } from '../../reference-server/src/db/postgres/postgres-errors.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { POOL_SIZE, useWriteQueueHarness } from '../support/write-queue-harness.ts';

// A job whose connection is lost: cut mid-job (the job rejects, nothing committed, the broken client dropped),
// cut while COMMIT is in flight (CommitOutcomeUnknownError, never retried), and the database restarting under
// both pools (they drop their dead clients and jobs commit again). The setup, and the leak check after every test,
// are in test/support/write-queue-harness.ts.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('PostgresWriteQueue on a real PostgreSQL', () => {
  const harness = useWriteQueueHarness();
  const { queue, committed, cutSleepingBackend, connectAdmin } = harness;

  it('pg_terminate_backend mid-job: the job rejects, nothing of it is committed, the broken client is dropped, and the next job commits', async () => {
    const writes = queue();
    let clientsDuringJob = 0;
    let effects = 0;
    let killedPid = 0;
    const outcome = writes.run(async (tx, context) => {
      context.afterCommit(() => {
        effects += 1;
      });
      const [row] = await tx.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      killedPid = row?.pid ?? 0;
      clientsDuringJob = harness.poolA.totalCount;
      await tx.rows("INSERT INTO journal (job) VALUES ('terminated')");
      await committed('SELECT pg_terminate_backend($1)', [killedPid]);
      // Wait until the backend is gone, so the next statement meets a closed connection.
      for (let i = 0; i < 100; i++) {
        const alive = await committed('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [killedPid]);
        if (alive.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await tx.rows("INSERT INTO journal (job) VALUES ('after the cut')");
    });
    const error = await outcome.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    // The job's own error: here the statement after the cut, refused on the dead connection.
    expect((error as Error).message).toMatch(
      /not queryable|terminating connection due to administrator command|Connection terminated/,
    );
    expect(error).not.toBeInstanceOf(CommitOutcomeUnknownError);
    expect(effects).toBe(0);
    // The broken client left the pool instead of going back to it.
    expect(harness.poolA.totalCount).toBe(clientsDuringJob - 1);
    const pids = await Promise.all(
      Array.from({ length: POOL_SIZE }, () =>
        writes.run(async (tx) => {
          const [row] = await tx.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await tx.rows("INSERT INTO journal (job) VALUES ('next')");
          return row?.pid;
        }),
      ),
    );
    expect(pids).not.toContain(killedPid);
    expect(await committed('SELECT job, count(*)::int AS n FROM journal GROUP BY job')).toEqual([
      { job: 'next', n: POOL_SIZE },
    ]);
  });

  it('a job that swallows the error of its cut connection and returns still rejects, with the cut as the reason', async () => {
    const writes = queue();
    const outcome = writes.run(async (tx) => {
      const [row] = await tx.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await tx.rows("INSERT INTO journal (job) VALUES ('cut')");
      await committed('SELECT pg_terminate_backend($1)', [row?.pid]);
      await tx.rows('SELECT pg_sleep(1)').catch(() => []);
      return 'looks fine';
    });
    const error = await outcome.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    // Known not committed (COMMIT was never sent), so not CommitOutcomeUnknownError.
    expect(error).not.toBeInstanceOf(CommitOutcomeUnknownError);
    expect((error as Error).message).toMatch(
      /terminating connection due to administrator command|Connection terminated/,
    );
    expect(await committed('SELECT job FROM journal')).toEqual([]);
  });

  it('the connection cut while COMMIT is in flight: CommitOutcomeUnknownError, never retried, and the pool recovers', async () => {
    const writes = queue();
    let attempts = 0;
    let effects = 0;
    const outcome = writes.run(async (tx, context) => {
      attempts += 1;
      context.afterCommit(() => {
        effects += 1;
      });
      await tx.rows("INSERT INTO slow_commits (id) VALUES ('x')");
    });
    // Settled is read only at the end; the handler is attached now so the rejection is never unhandled.
    const settled = outcome.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    // The deferred trigger sleeps inside COMMIT: cut that connection there.
    await cutSleepingBackend('COMMIT');

    const error = await settled;
    expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
    expect(error).toMatchObject({ code: 'commit_outcome_unknown' });
    expect((error as Error).message).toMatch(/may or may not have been committed/);
    expect(attempts).toBe(1);
    expect(effects).toBe(0);
    // (Here the server had not finished the commit: the trigger was still running.)
    expect(await committed('SELECT id FROM slow_commits')).toEqual([]);

    await writes.run(async (tx) => tx.rows("INSERT INTO journal (job) VALUES ('after')"));
    expect(await committed('SELECT job FROM journal')).toEqual([{ job: 'after' }]);
  });

  it('while the database restarts a job rejects; once it is back the pools drop their dead clients and jobs commit', async () => {
    const [writesA, writesB] = [queue(harness.poolA), queue(harness.poolB)];
    const writes = (i: number) => (i % 2 === 0 ? writesA : writesB);
    // Fill both pools with idle clients that the restart will kill.
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => writes(i).run(async (tx) => tx.rows('SELECT pg_sleep(0.05)'))),
    );
    expect(harness.poolA.totalCount + harness.poolB.totalCount).toBeGreaterThan(2);

    await harness.admin.end().catch(() => {});
    const restarting = harness.postgres.restart({ downMs: 1_500 });
    // Wait until the server refuses connections, then try a job.
    let refused: unknown;
    for (let i = 0; i < 100 && refused === undefined; i++) {
      refused = await writesA
        .run(async (tx) => tx.rows('SELECT 1'))
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      if (refused === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refused).toBeInstanceOf(Error);
    await restarting;

    await connectAdmin();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        writes(i).run(async (tx) => tx.rows('INSERT INTO journal (job) VALUES ($1)', [`back-${i}`])),
      ),
    );
    expect(await committed('SELECT count(*)::int AS n FROM journal')).toEqual([{ n: 20 }]);
  });
});
