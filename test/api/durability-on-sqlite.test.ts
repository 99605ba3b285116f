import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../reference-server/src/db/database.ts';
import { createSession } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// How SQLite keeps a commit: a promise of the SQLite store alone, so this file always runs the service on a
// SQLite file (`databaseUrl: null`, whatever SERVICEPAY_TEST_STORE says) and the PostgreSQL run of the API
// suites leaves it out (vitest.config.ts). Both stores' shared promise, a 201's rows committed and visible
// from another connection, is in durability-and-restart.test.ts.

let server: RunningServer | undefined;

afterAll(async () => {
  await server?.close();
});

describe('durability on SQLite', () => {
  it('runs SQLite in WAL mode with synchronous=FULL', async () => {
    server = await startServer({ databaseUrl: null });
    expect(server.onPostgres).toBe(false);
    const db = server.service.db;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    // 2 = FULL
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('checkpoints on its own thread, not in a COMMIT, and a stopped service leaves no WAL behind', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'servicepay-checkpoints-'));
    const dbPath = join(folder, 'servicepay.db');
    try {
      const running = await startServer({ databaseUrl: null }, { dbPath });
      // The service's connection never copies the WAL into the file inside a COMMIT (db/wal-checkpointer.ts).
      expect(running.service.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      const key = (await running.createBusiness()).keys.test.secretKey;
      const fileBefore = statSync(dbPath).size;
      // One at a time, so each is a commit of its own: past the 64 commits after which the thread starts.
      const created: { amount: number }[] = [];
      for (let i = 0; i < 100; i++)
        created.push(await createSession(running.baseUrl, key, { reference: `wal-${i}` }));
      // The thread's passes copy the new pages into the file while the service runs: the file grows before
      // any close (with checkpoints neither on commit nor on a thread, they would stay in the WAL).
      for (let i = 0; i < 100 && statSync(dbPath).size <= fileBefore; i++) await sleep(20);
      expect(statSync(dbPath).size).toBeGreaterThan(fileBefore);
      await running.close();
      // The thread's connection closes first, so the service's, the last, checkpoints the WAL and removes it.
      expect(existsSync(`${dbPath}-wal`)).toBe(false);
      const reader = openDatabase(dbPath);
      const amounts = reader
        .prepare("SELECT amount FROM sessions WHERE reference LIKE 'wal-%'")
        .pluck()
        .all() as number[];
      reader.close();
      expect(amounts).toHaveLength(100);
      expect(amounts.every((amount) => amount === created[0]?.amount)).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
