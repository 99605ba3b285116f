import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountSmallDisk, type SmallDisk, smallDiskAvailable } from '../../../test/support/small-disk.ts';
import { storageFull } from './storage-errors.ts';
import { TransactionRolledBackError, WriteQueue } from './write-queue.ts';

let folder: string;
let db: Database.Database;
let reader: Database.Database;
let effectErrors: unknown[];
let queue: WriteQueue<Record<string, never>>;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'servicepay-write-queue-'));
  const path = join(folder, 'queue.db');
  db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items (name TEXT PRIMARY KEY)');
  // A second connection sees only what was committed.
  reader = new Database(path, { readonly: true });
  effectErrors = [];
  queue = new WriteQueue(db, {}, (error) => effectErrors.push(error));
});

afterEach(() => {
  reader.close();
  db.close();
  rmSync(folder, { recursive: true, force: true });
});

const insert = (name: string) => db.prepare('INSERT INTO items (name) VALUES (?)').run(name);
const committed = () =>
  (reader.prepare('SELECT name FROM items ORDER BY name').all() as Array<{ name: string }>).map(
    (row) => row.name,
  );

describe('WriteQueue', () => {
  it('rolls back a failing job alone; the others of the batch commit', async () => {
    const results = await Promise.allSettled([
      queue.run(async () => {
        insert('a');
      }),
      queue.run(async () => {
        insert('b');
        throw new Error('job b fails after writing');
      }),
      queue.run(async () => {
        insert('c');
      }),
      // A constraint violation is a failure of this job only.
      queue.run(async () => {
        insert('a');
      }),
    ]);
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
    ]);
    expect(committed()).toEqual(['a', 'c']);
  });

  it('resolves a job only after its batch is committed, with the value the job returned', async () => {
    const seenInside: string[][] = [];
    const pending = queue.run(async () => {
      insert('x');
      seenInside.push(committed());
      return 42;
    });
    const other = queue.run(async () => {
      insert('y');
      seenInside.push(committed());
    });
    const value = await pending;
    // Inside the jobs nothing was committed yet; when the first promise settles, the whole batch is.
    expect(seenInside).toEqual([[], []]);
    expect(value).toBe(42);
    expect(committed()).toEqual(['x', 'y']);
    await other;
  });

  it('runs jobs one after another: each sees the writes of the jobs before it', async () => {
    const counts = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        queue.run(async () => {
          insert(`n${i}`);
          return (db.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n;
        }),
      ),
    );
    expect(counts).toEqual([1, 2, 3, 4, 5]);
  });

  it('runs afterCommit effects after the commit, not for a job that failed', async () => {
    const effects: Array<{ name: string; committed: string[]; inTransaction: boolean }> = [];
    await Promise.allSettled([
      queue.run(async (_tx, context) => {
        insert('p');
        context.afterCommit(() =>
          effects.push({ name: 'p', committed: committed(), inTransaction: db.inTransaction }),
        );
      }),
      queue.run(async (_tx, context) => {
        insert('q');
        context.afterCommit(() => effects.push({ name: 'q', committed: [], inTransaction: false }));
        throw new Error('q fails');
      }),
    ]);
    expect(effects).toEqual([{ name: 'p', committed: ['p'], inTransaction: false }]);
  });

  it('an effect that throws does not reject its job; it is reported and the next effects still run', async () => {
    const ran: string[] = [];
    const value = await queue.run(async (_tx, context) => {
      insert('e');
      context.afterCommit(() => {
        throw new Error('push failed');
      });
      context.afterCommit(() => ran.push('second effect'));
      return 'done';
    });
    expect(value).toBe('done');
    expect(ran).toEqual(['second effect']);
    expect(effectErrors).toHaveLength(1);
    expect((effectErrors[0] as Error).message).toBe('push failed');
    expect(committed()).toEqual(['e']);
  });

  it('an async effect that rejects is reported, not left unhandled; the next effects run and the write stays', async () => {
    const failure = new Error('webhook enqueue failed');
    const ran: string[] = [];
    const value = await queue.run(async (_tx, context) => {
      insert('r');
      context.afterCommit(async () => {
        throw failure;
      });
      context.afterCommit(() => ran.push('next effect'));
      return 'done';
    });
    expect(value).toBe('done');
    // The rejection is seen a microtask later; an unhandled one would fail this file.
    await new Promise((resolve) => setImmediate(resolve));
    expect(effectErrors).toEqual([failure]);
    expect(ran).toEqual(['next effect']);
    expect(committed()).toEqual(['r']);
  });

  it('tells its commit hook of each committed batch, and a hook that throws fails no committed job', async () => {
    let commits = 0;
    const hooked = new WriteQueue<Record<string, never>>(
      db,
      {},
      (error) => effectErrors.push(error),
      undefined,
      () => {
        commits++;
        throw new Error('no thread for the checkpointer');
      },
    );
    const values = await Promise.all([
      hooked.run(async () => insert('h1').changes),
      hooked.run(async () => insert('h2').changes),
    ]);
    expect(values).toEqual([1, 1]);
    expect(commits).toBe(1);
    expect(committed()).toEqual(['h1', 'h2']);
    expect((effectErrors[0] as Error).message).toBe('no thread for the checkpointer');
    await expect(hooked.run(async () => insert('h3').changes)).resolves.toBe(1);
    expect(commits).toBe(2);
  });

  it('splits more jobs than the batch size over several commits, all of them landing', async () => {
    const small = new WriteQueue(db, {}, (error) => effectErrors.push(error), 3);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        small.run(async () => {
          insert(`b${String(i).padStart(2, '0')}`);
        }),
      ),
    );
    expect(committed()).toHaveLength(10);
  });

  it('runs a batch start to commit in one turn of the event loop, awaits and all: nothing runs in between', async () => {
    const seenByOthers: boolean[] = [];
    await queue.run(async () => {
      // What a request handler scheduled meanwhile would see of this shared connection: it runs after the commit.
      setImmediate(() => seenByOthers.push(db.inTransaction));
      insert('t1');
      await Promise.resolve();
      insert('t2');
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seenByOthers).toEqual([false]);
    expect(committed()).toEqual(['t1', 't2']);
  });

  it('starts the next batch only after the last one committed: jobs queued meanwhile get their own', async () => {
    const order: string[] = [];
    const first = queue.run(async () => {
      insert('f');
      // Queued while this batch runs: it must not join (or nest in) this transaction.
      void queue.run(async () => {
        insert('g');
        order.push(`g sees ${committed().join(',')}`);
      });
      order.push('f');
    });
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    await queue.run(async () => undefined);
    expect(order).toEqual(['f', 'g sees f']);
    expect(committed()).toEqual(['f', 'g']);
  });
});

// A real full disk (a tmpfs filled to ENOSPC; test/api/storage-full.test.ts says in one line when none can be
// mounted). When a job writes more than SQLite's page cache holds, SQLite spills pages into the WAL before the
// commit; on a full disk that fails with SQLITE_FULL, and SQLite rolls back the whole transaction, every earlier
// job of the batch with it, not only the statement.
describe.runIf(smallDiskAvailable)('WriteQueue on a full disk', () => {
  let disk: SmallDisk;
  let full: Database.Database;
  let fullReader: Database.Database;
  let fullQueue: WriteQueue<Record<string, never>>;

  beforeEach(() => {
    disk = mountSmallDisk(16);
    const path = join(disk.path, 'queue.db');
    full = new Database(path);
    full.pragma('journal_mode = WAL');
    full.pragma('synchronous = FULL');
    full.exec('CREATE TABLE items (name TEXT PRIMARY KEY)');
    fullReader = new Database(path, { readonly: true });
    fullQueue = new WriteQueue(full, {}, (error) => effectErrors.push(error));
  });

  afterEach(() => {
    fullReader.close();
    full.close();
    disk.remove();
  });

  const add = (name: string) => full.prepare('INSERT INTO items (name) VALUES (?)').run(name);
  /** More than the 2 MiB page cache: SQLite writes pages to the WAL before the commit. */
  const addMany = (prefix: string) => {
    for (let i = 0; i < 4_000; i++) add(`${prefix}-${i}-${'x'.repeat(1_000)}`);
  };
  const names = () => (fullReader.prepare('SELECT name FROM items').pluck().all() as string[]).sort();

  it('fails every job of a batch that SQLite rolled back, each with the full-disk error, and commits the next batch once there is space', async () => {
    disk.fill();
    const results = await Promise.allSettled([
      fullQueue.run(async () => {
        add('before');
      }),
      fullQueue.run(async () => {
        addMany('spill');
      }),
      fullQueue.run(async () => {
        add('after');
      }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const result of results) {
      const reason = (result as PromiseRejectedResult).reason;
      expect({ code: reason.code, full: storageFull(reason) }).toEqual({ code: 'SQLITE_FULL', full: true });
    }
    expect(full.inTransaction).toBe(false);
    expect(names()).toEqual([]);

    disk.free();
    await Promise.all([fullQueue.run(async () => add('a')), fullQueue.run(async () => add('b'))]);
    expect(names()).toEqual(['a', 'b']);
  });

  it('fails the batch of a job that caught the full-disk error and went on: nothing of it is written', async () => {
    disk.fill();
    const swallowed: unknown[] = [];
    const results = await Promise.allSettled([
      fullQueue.run(async () => {
        add('first');
      }),
      fullQueue.run(async () => {
        try {
          addMany('spill');
        } catch (error) {
          swallowed.push(error);
        }
      }),
    ]);
    expect(storageFull(swallowed[0])).toBe(true);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(TransactionRolledBackError);
    expect(full.inTransaction).toBe(false);
    disk.free();
    expect(names()).toEqual([]);
  });
});
