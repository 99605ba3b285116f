import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { RESTART_WAL_AT_FRAMES, WalCheckpointer } from './wal-checkpointer.ts';

// The service's SQLite file is checkpointed by a worker thread with its own connection instead of inside the
// COMMIT that crosses SQLite's threshold (issue 12: those checkpoints held the event loop 3 to 20 ms). What an
// operator relies on: the WAL stays bounded under steady writes, every committed row stays readable, and the
// file closes clean. Real file, real worker thread, real second connection.

const PAGE = 4096;
/** A commit of 10 pages of new rows, as a busy service's batches are. */
const ROW = Buffer.alloc(10 * PAGE - 200, 7);

let folder: string;
let path: string;
let db: SqliteDatabase;
const errors: unknown[] = [];

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'servicepay-wal-'));
  path = join(folder, 'servicepay.db');
  db = openDatabase(path);
  db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  errors.length = 0;
});

afterEach(() => {
  if (db.open) db.close();
  rmSync(folder, { recursive: true, force: true });
});

const walBytes = () => statSync(`${path}-wal`).size;

/**
 * `commits` commits of one 40 KB row each, back to back with one turn of the event loop between them, as a
 * loaded server's batches come: the thread's passes run while commits go on.
 */
async function writeSteadily(commits: number, afterCommit: () => void): Promise<number> {
  const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
  let largestWal = 0;
  for (let i = 0; i < commits; i++) {
    db.transaction(() => insert.run(ROW))();
    afterCommit();
    largestWal = Math.max(largestWal, walBytes());
    await nextTurn();
  }
  return largestWal;
}

describe('WalCheckpointer', () => {
  // About 2 × 16 MiB: a pass on the thread, then the frames committed while it ran, then the restart.
  const bound = 2 * RESTART_WAL_AT_FRAMES * (PAGE + 24) + 4 * ROW.length;
  const commits = Math.ceil((1.5 * bound) / ROW.length);

  it('keeps the WAL bounded under steady writes, and every committed row stays readable', async () => {
    const checkpointer = WalCheckpointer.attach(db, path, (error) => errors.push(error));
    const largestWal = await writeSteadily(commits, () => checkpointer.committed());
    await checkpointer.close();
    expect(errors).toEqual([]);
    expect(largestWal).toBeLessThan(bound);
    // Read by another connection: the rows are in the file or its WAL, whichever a checkpoint left them in.
    const reader = openDatabase(path);
    expect(reader.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(commits);
    expect(reader.prepare('SELECT sum(length(body)) FROM filler').pluck().get()).toBe(commits * ROW.length);
    reader.close();
  });

  it('without it, the same writes grow the WAL past that bound (what the test above would catch)', async () => {
    db.pragma('wal_autocheckpoint = 0');
    const largestWal = await writeSteadily(commits, () => {});
    expect(largestWal).toBeGreaterThan(bound);
  });

  it('turns SQLite’s checkpoint on commit off, so no COMMIT of the service copies pages into the file', () => {
    WalCheckpointer.attach(db, path, (error) => errors.push(error));
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
  });

  it('when its thread cannot run, says so once, hands checkpoints back to SQLite, and every write still commits', async () => {
    // The thread opens its own connection by path: one it cannot open makes it fail as a lost disk would.
    const checkpointer = WalCheckpointer.attach(db, join(folder, 'missing', 'servicepay.db'), (error) =>
      errors.push(error),
    );
    await writeSteadily(100, () => checkpointer.committed());
    for (let i = 0; i < 50 && errors.length === 0; i++) await sleep(20);
    await writeSteadily(100, () => checkpointer.committed());
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/unable to open|directory does not exist|SQLITE_CANTOPEN/i);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(db.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(200);
    await checkpointer.close();
  });

  it('closes its thread and connection, after which closing the service’s connection removes the WAL', async () => {
    const checkpointer = WalCheckpointer.attach(db, path, (error) => errors.push(error));
    await writeSteadily(100, () => checkpointer.committed());
    await checkpointer.close();
    db.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(errors).toEqual([]);
  });
});
