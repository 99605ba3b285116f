import { describe, expect, it } from 'vitest';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { barrier, useWriteQueueHarness } from '../support/write-queue-harness.ts';

// Concurrent jobs on one row, over two instances' pools: what READ COMMITTED with a row lock or a conditional
// update guarantees, what it does not (a plain read-then-write loses updates), and how REPEATABLE READ and
// SERIALIZABLE jobs are retried when overtaken, so that a retry decides on the committed state. The setup, and the
// leak check after every test, are in test/support/write-queue-harness.ts.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('PostgresWriteQueue on a real PostgreSQL', () => {
  const harness = useWriteQueueHarness();
  const { queue, committed } = harness;

  it('READ COMMITTED with a row lock: 50 concurrent "increment if below 30" over two instances end at exactly 30', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('seats', 0)");
    const [a, b] = [queue(harness.poolA), queue(harness.poolB)];
    let effects = 0;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? a : b).run(async (tx, context) => {
          // The read-check-write of a repository on PostgreSQL: read the row FOR UPDATE, then decide.
          const [row] = await tx.rows<{ value: number }>(
            "SELECT value FROM counters WHERE id = 'seats' FOR UPDATE",
          );
          if (!row || row.value >= 30) return false;
          await tx.rows("UPDATE counters SET value = $1 WHERE id = 'seats'", [row.value + 1]);
          await tx.rows('INSERT INTO journal (job) VALUES ($1)', [`seat-${row.value + 1}`]);
          context.afterCommit(() => {
            effects += 1;
          });
          return true;
        }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(30);
    expect(await committed("SELECT value FROM counters WHERE id = 'seats'")).toEqual([{ value: 30 }]);
    // Each seat taken once: no two jobs read the same value.
    const seats = (await committed<{ job: string }>('SELECT job FROM journal')).map((row) => row.job);
    expect(new Set(seats).size).toBe(30);
    expect(effects).toBe(30);
  });

  it('READ COMMITTED with a conditional update: 50 concurrent "pay if pending" over two instances have exactly one winner', async () => {
    await harness.admin.query("INSERT INTO orders (id, status) VALUES ('order-1', 'pending')");
    const [a, b] = [queue(harness.poolA), queue(harness.poolB)];
    const effects: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? a : b).run(async (tx, context) => {
          const won = await tx.rows(
            `UPDATE orders SET status = 'paid', paid_by = $1
              WHERE id = 'order-1' AND status = 'pending' RETURNING id`,
            [`notification-${i}`],
          );
          if (won.length === 0) return false;
          await tx.rows('INSERT INTO journal (job) VALUES ($1)', [`paid-by-${i}`]);
          context.afterCommit(() => effects.push(i));
          return true;
        }),
      ),
    );
    const winner = results.indexOf(true);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await committed('SELECT status, paid_by FROM orders')).toEqual([
      { status: 'paid', paid_by: `notification-${winner}` },
    ]);
    expect(await committed('SELECT job FROM journal')).toEqual([{ job: `paid-by-${winner}` }]);
    expect(effects).toEqual([winner]);
  });

  it('READ COMMITTED alone does not protect a plain read-then-write (why the repositories lock or update conditionally)', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('plain', 0)");
    const writes = queue();
    const everyoneHasRead = barrier(10);
    await Promise.all(
      Array.from({ length: 10 }, () =>
        writes.run(async (tx) => {
          const [row] = await tx.rows<{ value: number }>("SELECT value FROM counters WHERE id = 'plain'");
          await everyoneHasRead.arrive();
          await tx.rows("UPDATE counters SET value = $1 WHERE id = 'plain'", [(row?.value ?? 0) + 1]);
        }),
      ),
    );
    // Ten increments, nine lost: each job wrote 0 + 1.
    expect(await committed("SELECT value FROM counters WHERE id = 'plain'")).toEqual([{ value: 1 }]);
  });

  it('REPEATABLE READ: the same plain read-then-write loses nothing, the overtaken jobs retried, each effect run once', async () => {
    await harness.admin.query("INSERT INTO counters (id, value) VALUES ('rr', 0)");
    // Ten jobs on one row: a job fails only when another commits, so ten runs always suffice.
    const writes = queue(harness.poolA, { isolation: 'repeatable read', maxAttempts: 10 });
    const everyoneHasRead = barrier(10);
    let attempts = 0;
    const effects: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        let mine = 0;
        return writes.run(async (tx, context) => {
          attempts += 1;
          mine += 1;
          context.afterCommit(() => effects.push(i));
          const [row] = await tx.rows<{ value: number }>("SELECT value FROM counters WHERE id = 'rr'");
          // First runs only: all ten read 0 before any writes, so nine of them must be overtaken.
          if (mine === 1) await everyoneHasRead.arrive();
          await tx.rows("UPDATE counters SET value = $1 WHERE id = 'rr'", [(row?.value ?? 0) + 1]);
          return row?.value ?? 0;
        });
      }),
    );
    expect(await committed("SELECT value FROM counters WHERE id = 'rr'")).toEqual([{ value: 10 }]);
    // Each job saw a different value: 0 … 9.
    expect([...results].sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(attempts).toBeGreaterThanOrEqual(19);
    expect(effects.sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i));
  });

  it('SERIALIZABLE: a write skew found only at COMMIT is retried, and the retry decides on the committed state', async () => {
    await harness.admin.query("INSERT INTO doctors (name, on_call) VALUES ('alice', true), ('bob', true)");
    const writes = queue(harness.poolA, { isolation: 'serializable' });
    const bothHaveRead = barrier(2);
    const bothHaveWritten = barrier(2);
    const runs: Array<{ name: string; returned: boolean }> = [];
    const effects: string[] = [];
    const goOffCall = (name: string) => {
      let mine = 0;
      return writes.run(async (tx, context) => {
        mine += 1;
        const run = { name, returned: false };
        runs.push(run);
        context.afterCommit(() => effects.push(name));
        const [row] = await tx.rows<{ n: number }>('SELECT count(*)::int AS n FROM doctors WHERE on_call');
        if (mine === 1) await bothHaveRead.arrive();
        // The rule: someone stays on call. Each sees two on call and leaves, which together break it.
        const leaves = (row?.n ?? 0) >= 2;
        if (leaves) await tx.rows('UPDATE doctors SET on_call = false WHERE name = $1', [name]);
        if (mine === 1) await bothHaveWritten.arrive();
        run.returned = true;
        return leaves;
      });
    };
    const [alice, bob] = await Promise.all([goOffCall('alice'), goOffCall('bob')]);
    // One left; the other's first run failed at COMMIT (its job had returned), and its second run stayed.
    expect([alice, bob].sort()).toEqual([false, true]);
    expect(runs).toHaveLength(3);
    expect(runs.every((run) => run.returned)).toBe(true);
    expect(await committed('SELECT count(*)::int AS n FROM doctors WHERE on_call')).toEqual([{ n: 1 }]);
    expect(effects.sort()).toEqual(['alice', 'bob']);
  });

  it('two instances inserting the same first-time row: the loser runs again, reads the winner and answers as a repeat', async () => {
    await harness.admin.query("INSERT INTO orders (id, status) VALUES ('order-dup', 'pending')");
    const results = await Promise.all(
      [harness.poolA, harness.poolB, harness.poolA, harness.poolB].map((pool, index) =>
        queue(pool).run(async (tx) => {
          // Read, then insert (as the notification processor does): under READ COMMITTED both may read "none".
          const [seen] = await tx.rows<{ job: string }>("SELECT job FROM journal WHERE job LIKE 'pay:%'");
          if (seen) return `repeat of ${seen.job}`;
          await tx.rows('SELECT pg_sleep(0.05)');
          await tx.rows("INSERT INTO journal (job) VALUES ('pay:order-dup')");
          await tx.rows("INSERT INTO orders (id, status) VALUES ('order-dup-paid', 'paid')");
          return `paid by ${index}`;
        }),
      ),
    );
    expect(results.filter((result) => result.startsWith('paid by'))).toHaveLength(1);
    expect(results.filter((result) => result === 'repeat of pay:order-dup')).toHaveLength(3);
    expect(await committed("SELECT job FROM journal WHERE job LIKE 'pay:%'")).toEqual([
      { job: 'pay:order-dup' },
    ]);
  });
});
