import { afterAll, describe, expect, it } from 'vitest';
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
});
