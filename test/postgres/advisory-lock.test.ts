import { describe, expect, it } from 'vitest';
import { EXPIRY_SWEEP_LOCK_KEY, runAlone } from '../../reference-server/src/db/postgres/advisory-lock.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 13: "the expiry sweeper acting once per expiry". Every instance's pass is correct on its own (one
// conditional transition per ending); `runAlone` makes the timed passes take turns, so N instances do not
// read, and ask the bank about, the same due rows N times. Two pools stand for two instances.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('runAlone: one instance at a time under an advisory lock', () => {
  const scratch = useScratchDatabase({
    database: 'advisory',
    pools: { instanceA: { max: 3 }, instanceB: { max: 3 } },
  });

  it('while one instance runs, the other skips at once; afterwards the other runs', async () => {
    let finish: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const ran: string[] = [];
    const first = runAlone(scratch.instanceA, EXPIRY_SWEEP_LOCK_KEY, async () => {
      ran.push('A started');
      await gate;
      ran.push('A done');
      return 'A';
    });
    await expect.poll(() => ran).toEqual(['A started']);
    // B does not wait for A: it answers undefined and its work never runs.
    expect(
      await runAlone(scratch.instanceB, EXPIRY_SWEEP_LOCK_KEY, async () => ran.push('B ran')),
    ).toBeUndefined();
    finish();
    expect(await first).toBe('A');
    expect(await runAlone(scratch.instanceB, EXPIRY_SWEEP_LOCK_KEY, async () => 'B')).toBe('B');
    expect(ran).toEqual(['A started', 'A done']);
  });

  it('a failing pass releases the lock; other keys are independent', async () => {
    await expect(
      runAlone(scratch.instanceA, EXPIRY_SWEEP_LOCK_KEY, async () => {
        throw new Error('the pass failed');
      }),
    ).rejects.toThrow('the pass failed');
    expect(await runAlone(scratch.instanceB, EXPIRY_SWEEP_LOCK_KEY, async () => 'B after a failure')).toBe(
      'B after a failure',
    );
    const inner = await runAlone(scratch.instanceA, EXPIRY_SWEEP_LOCK_KEY, () =>
      runAlone(scratch.instanceB, EXPIRY_SWEEP_LOCK_KEY + 1000, async () => 'another key'),
    );
    expect(inner).toBe('another key');
  });

  it('an instance that dies holding the lock releases it with its connection', async () => {
    let finish: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let started = false;
    const dying = runAlone(scratch.instanceA, EXPIRY_SWEEP_LOCK_KEY, async () => {
      started = true;
      await gate;
    });
    await expect.poll(() => started).toBe(true);
    expect(await runAlone(scratch.instanceB, EXPIRY_SWEEP_LOCK_KEY, async () => 'too early')).toBeUndefined();
    // The holder's connection ends (the process was killed): PostgreSQL drops its session locks.
    await scratch.instanceB.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks
       WHERE locktype = 'advisory' AND objid = $1 AND granted AND pid <> pg_backend_pid()`,
      [EXPIRY_SWEEP_LOCK_KEY],
    );
    await expect
      .poll(() => runAlone(scratch.instanceB, EXPIRY_SWEEP_LOCK_KEY, async () => 'taken over'), {
        timeout: 5_000,
      })
      .toBe('taken over');
    finish();
    await dying;
  });
});
