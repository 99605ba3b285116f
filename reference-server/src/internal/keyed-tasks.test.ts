import { describe, expect, it } from 'vitest';
import { KeyedTasks } from './keyed-tasks.ts';

describe('KeyedTasks', () => {
  it('runs one task per key at a time, on the next turn, and lets a caller wait for it', async () => {
    const tasks = new KeyedTasks();
    const ran: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    tasks.start(
      'rfd_1',
      async () => {
        ran.push('first');
        await held;
      },
      () => {},
    );
    tasks.start(
      'rfd_1',
      async () => {
        ran.push('second');
      },
      () => {},
    );
    expect(ran).toEqual([]); // not yet: the next turn
    expect(tasks.has('rfd_1')).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['first']);
    let over = false;
    const waited = tasks.settled('rfd_1').then(() => {
      over = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(over).toBe(false);
    release();
    await waited;
    expect(tasks.has('rfd_1')).toBe(false);
    // Over: the key can be asked again.
    tasks.start(
      'rfd_1',
      async () => {
        ran.push('again');
      },
      () => {},
    );
    await tasks.settled('rfd_1');
    expect(ran).toEqual(['first', 'again']);
  });

  it('hands a failure to onError and never rejects the waiter', async () => {
    const tasks = new KeyedTasks();
    const errors: unknown[] = [];
    tasks.start(
      'trf_1',
      async () => {
        throw new Error('the bank did not answer');
      },
      (error) => errors.push(error),
    );
    await expect(tasks.settled('trf_1')).resolves.toBeUndefined();
    expect(errors.map((error) => (error as Error).message)).toEqual(['the bank did not answer']);
    await expect(tasks.settled('never-started')).resolves.toBeUndefined();
  });

  it('askAgain starts the pending records no ask is running for, waits for them, and counts them', async () => {
    const tasks = new KeyedTasks();
    const asked: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ask = (id: string, work: () => Promise<void> = async () => {}) =>
      tasks.start(
        id,
        async () => {
          asked.push(id);
          await work();
        },
        () => {},
      );
    ask('rfd_running', () => held);
    await new Promise((resolve) => setImmediate(resolve));
    let over = false;
    const sweep = tasks
      .askAgain(
        [{ id: 'rfd_running' }, { id: 'rfd_a' }, { id: 'rfd_b' }],
        (record) => record.id,
        (record) => ask(record.id),
      )
      .then((started) => {
        over = true;
        return started;
      });
    expect(await sweep).toBe(2);
    expect(over).toBe(true);
    // The ask already running was left to run, not started twice.
    expect(asked).toEqual(['rfd_running', 'rfd_a', 'rfd_b']);
    expect(tasks.has('rfd_running')).toBe(true);
    release();
    await tasks.settled('rfd_running');
  });
});
