import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from '../../reference-server/src/db/database.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { postgresRepositoriesOn } from '../../reference-server/src/db/postgres/postgres-store.ts';
import { repositoriesOn } from '../../reference-server/src/db/repositories.ts';
import type { NewRequestLogEntry, RequestLogRepository } from '../../reference-server/src/db/request-log.ts';
import { SqliteRunner } from '../../reference-server/src/db/sqlite-runner.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// The request log's batch write on both stores as the service binds them: on PostgreSQL one statement per
// batch (`PostgresRequestLogRepository`, each column an array parameter), on SQLite one per entry. Every entry
// must land once, with every field as given (quotes, commas, braces, non-ASCII and nulls included: they travel
// inside PostgreSQL array literals), in the order given (the log's `seq`, which its pages and cursors follow).

reportIfPostgresMissing();

const entry = (index: number, businessId = 'biz_1'): NewRequestLogEntry => ({
  requestId: `req_${String(index).padStart(16, '0')}`,
  businessId,
  environment: index % 5 === 0 ? 'live' : 'test',
  method: index % 3 === 0 ? 'GET' : 'POST',
  // As a client may send it: the log keeps the path as sent (credentials masked), not re-encoded.
  path: `/api/widget/sessions?reference=a,"b"{c}\\ ${index} ₦é NULL`,
  status: index % 7 === 0 ? 409 : 201,
  keyHint: 'sk_test_…a1B2',
  durationMs: index,
  errorBody:
    index % 7 === 0 ? `{"meta":{"statusCode":409,"message":"Reference \\"r,${index}\\" {used}"}}` : null,
  createdAt: 1_700_000_000_000 + index,
});

describe.runIf(postgresAvailable)('the request log written in batches, on SQLite and on PostgreSQL', () => {
  const scratch = useScratchDatabase({ database: 'request_log', pools: { pool: { max: 4 } } });
  let folder: string;
  let sqlite: SqliteDatabase;
  const stores: Array<[string, () => RequestLogRepository]> = [
    ['postgres', () => postgresRepositoriesOn(scratch.pool).requestLog],
    ['sqlite', () => repositoriesOn(new SqliteRunner(sqlite)).requestLog],
  ];

  beforeAll(async () => {
    await migratePostgres(scratch.pool);
    folder = mkdtempSync(join(tmpdir(), 'request-log-batches-'));
    sqlite = openDatabase(join(folder, 'servicepay.db'));
    for (const id of ['biz_1', 'biz_2']) {
      await scratch.pool.query(
        "INSERT INTO businesses (id, name, kyc_status, created_at) VALUES ($1, $1, 'approved', 1)",
        [id],
      );
      sqlite
        .prepare("INSERT INTO businesses (id, name, kyc_status, created_at) VALUES (?, ?, 'approved', 1)")
        .run(id, id);
    }
  });

  afterAll(async () => {
    sqlite?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  for (const [store, repository] of stores) {
    it(`${store}: batches of 1, 2, 33 and 500 entries land once each, every field as given, in the order given`, async () => {
      const log = repository();
      let next = 0;
      const written: NewRequestLogEntry[] = [];
      for (const size of [1, 2, 33, 500]) {
        const batch = Array.from({ length: size }, () => entry(next++, next % 2 === 0 ? 'biz_1' : 'biz_2'));
        await log.insertMany(batch);
        written.push(...batch);
      }
      for (const businessId of ['biz_1', 'biz_2'])
        for (const environment of ['test', 'live'] as const) {
          const expected = written.filter(
            (e) => e.businessId === businessId && e.environment === environment,
          );
          const rows = await log.list({ businessId, environment, limit: 1000 });
          // Newest first: the entry given last has the highest seq.
          const oldestFirst = [...rows].reverse();
          expect(oldestFirst.map(({ seq: _seq, ...fields }) => fields)).toEqual(expected);
          for (let index = 1; index < oldestFirst.length; index++)
            expect(oldestFirst[index]?.seq).toBeGreaterThan(
              oldestFirst[index - 1]?.seq ?? Number.POSITIVE_INFINITY,
            );
        }
      // Found by its Request-Id, as the portal's search does.
      expect(await log.find(written[40]?.requestId ?? '')).toMatchObject({ ...written[40] });
    });

    it(`${store}: an empty batch writes nothing`, async () => {
      const log = repository();
      const before = await log.list({ businessId: 'biz_1', environment: 'test', limit: 1000 });
      await log.insertMany([]);
      expect(await log.list({ businessId: 'biz_1', environment: 'test', limit: 1000 })).toEqual(before);
    });
  }

  // One statement is all or nothing on its own. (On SQLite the entries are one statement each; there the write
  // job's savepoint, in which the service always runs `insertMany`, takes back the ones before a failure.)
  it('postgres: a batch with an entry of an unknown business writes none of its entries', async () => {
    const log = postgresRepositoriesOn(scratch.pool).requestLog;
    const before = await log.list({ businessId: 'biz_1', environment: 'test', limit: 1000 });
    await expect(log.insertMany([entry(9_001), entry(9_002, 'biz_missing')])).rejects.toMatchObject({
      code: '23503',
    });
    expect(await log.list({ businessId: 'biz_1', environment: 'test', limit: 1000 })).toEqual(before);
  });
});
