import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { type NewRequestLogEntry, SqlRequestLogRepository } from './request-log.ts';
import { SqliteRunner } from './sqlite-runner.ts';

// `insertMany` writes a batch of the request log (issue 38 tried it as multi-row statements): every entry must land once,
// with every field, in the order given (the log's `seq`, which its pages and cursors follow).

let folder: string;
let db: SqliteDatabase;
let log: SqlRequestLogRepository;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'request-log-test-'));
  db = openDatabase(join(folder, 'servicepay.db'));
  // The entries' business (the log's foreign key).
  db.prepare("INSERT INTO businesses (id, name, created_at) VALUES ('biz_1', 'Shop', 1)").run();
  log = new SqlRequestLogRepository(new SqliteRunner(db));
});

afterEach(() => {
  db.close();
  rmSync(folder, { recursive: true, force: true });
});

const entry = (index: number): NewRequestLogEntry => ({
  requestId: `req_${index}`,
  businessId: 'biz_1',
  environment: 'test',
  method: 'POST',
  path: `/api/widget/sessions?n=${index}`,
  status: index % 7 === 0 ? 409 : 201,
  keyHint: 'sk_test_…a1B2',
  durationMs: index,
  errorBody: index % 7 === 0 ? `{"meta":{"statusCode":409,"n":${index}}}` : null,
  createdAt: 1_000_000 + index,
});

describe('RequestLogRepository.insertMany (SQLite, a file)', () => {
  for (const count of [1, 2, 31, 32, 33, 77]) {
    it(`writes ${count} entries once each, every field, in the order given`, async () => {
      const entries = Array.from({ length: count }, (_, index) => entry(index));
      await log.insertMany(entries);
      const rows = await log.list({ businessId: 'biz_1', environment: 'test', limit: 1000 });
      expect(rows).toHaveLength(count);
      // Newest first: the last entry given has the highest seq.
      const oldestFirst = [...rows].reverse();
      oldestFirst.forEach((row, index) => {
        const { seq, ...fields } = row;
        expect(fields).toEqual(entries[index]);
        if (index > 0) expect(seq).toBeGreaterThan(oldestFirst[index - 1]?.seq ?? Number.POSITIVE_INFINITY);
      });
    });
  }

  it('writes nothing for an empty batch', async () => {
    await log.insertMany([]);
    expect(await log.list({ businessId: 'biz_1', environment: 'test', limit: 10 })).toEqual([]);
  });
});
