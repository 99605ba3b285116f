import type { SessionStatus } from '@servicepay/node/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqlBusinessRepository } from './businesses.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { type SessionListQuery, SqlSessionRepository } from './sessions.ts';
import { SqliteRunner } from './sqlite-runner.ts';

// The merchant's session list (`GET /api/widget/sessions`): each filter answers the right page, and reaches
// it through an index that holds exactly those rows, so its cost does not grow with the table (issue 12: at
// 1M sessions `?status=` and `?reference=` walked the owner index and took 272 ms). The plan is behaviour
// here, asserted from EXPLAIN QUERY PLAN; the timings live in `npm run bench -- list-latency`.

let db: SqliteDatabase;
let sessions: SqlSessionRepository;

const STATUSES: SessionStatus[] = ['pending', 'awaiting_payment', 'successful', 'expired', 'cancelled'];

beforeEach(async () => {
  db = openDatabase(':memory:');
  sessions = new SqlSessionRepository(new SqliteRunner(db));
  const businesses = new SqlBusinessRepository(new SqliteRunner(db));
  await businesses.insert({ id: 'biz_a', name: 'A', kycApproved: true, createdAt: 0 });
  await businesses.insert({ id: 'biz_b', name: 'B', kycApproved: true, createdAt: 0 });
  // 30 sessions of A in test, interleaved with B's and A's live ones, statuses in turn.
  let n = 0;
  for (let i = 0; i < 30; i++) {
    for (const [businessId, environment] of [
      ['biz_a', 'test'],
      ['biz_b', 'test'],
      ['biz_a', 'live'],
    ] as const) {
      n++;
      await sessions.insert({
        id: `ses_${businessId}_${environment}_${i}`,
        businessId,
        environment,
        reference: `order-${i}`,
        status: STATUSES[i % STATUSES.length] as SessionStatus,
        amount: 1000 + i,
        currency: 'NGN',
        payerName: 'Ada',
        payerEmail: 'ada@example.com',
        payerPhone: null,
        metadata: {},
        clientSecretHash: Buffer.from(`secret-${n}`),
        createdAt: n,
        updatedAt: n,
        expiresAt: n + 60_000,
      });
    }
  }
});

afterEach(() => {
  db.close();
});

const A_TEST = { businessId: 'biz_a', environment: 'test' } as const;
const ids = async (query: SessionListQuery) => (await sessions.list(query)).map((session) => session.id);

describe('SessionRepository.list', () => {
  it('lists an owner’s sessions newest first, a page at a time from the cursor', async () => {
    const first = await sessions.list({ ...A_TEST, limit: 4 });
    expect(first.map((session) => session.id)).toEqual([
      'ses_biz_a_test_29',
      'ses_biz_a_test_28',
      'ses_biz_a_test_27',
      'ses_biz_a_test_26',
    ]);
    expect(await ids({ ...A_TEST, limit: 2, beforeSeq: first.at(-1)?.seq })).toEqual([
      'ses_biz_a_test_25',
      'ses_biz_a_test_24',
    ]);
  });

  it('filters by status, newest first, within the owner and from the cursor', async () => {
    const successful = await sessions.list({ ...A_TEST, status: 'successful', limit: 100 });
    expect(successful.map((session) => session.id)).toEqual(
      [27, 22, 17, 12, 7, 2].map((i) => `ses_biz_a_test_${i}`),
    );
    expect(successful.every((session) => session.status === 'successful')).toBe(true);
    const afterCursor = await ids({
      ...A_TEST,
      status: 'successful',
      limit: 2,
      beforeSeq: successful[1]?.seq,
    });
    expect(afterCursor).toEqual(['ses_biz_a_test_17', 'ses_biz_a_test_12']);
  });

  it('finds a reference within the owner only; a status or a cursor that excludes it leaves the page empty', async () => {
    expect(await ids({ ...A_TEST, reference: 'order-7', limit: 20 })).toEqual(['ses_biz_a_test_7']);
    expect(await ids({ businessId: 'biz_b', environment: 'test', reference: 'order-7', limit: 20 })).toEqual([
      'ses_biz_b_test_7',
    ]);
    expect(await ids({ ...A_TEST, reference: 'order-7', status: 'successful', limit: 20 })).toEqual([
      'ses_biz_a_test_7',
    ]);
    expect(await ids({ ...A_TEST, reference: 'order-7', status: 'pending', limit: 20 })).toEqual([]);
    const seven = (await sessions.list({ ...A_TEST, reference: 'order-7', limit: 20 }))[0];
    expect(await ids({ ...A_TEST, reference: 'order-7', limit: 20, beforeSeq: seven?.seq })).toEqual([]);
    expect(await ids({ ...A_TEST, reference: 'no-such-order', limit: 20 })).toEqual([]);
  });
});

describe('SessionRepository.explainList: every filter reaches its index', () => {
  const plan = (query: Partial<SessionListQuery>) =>
    sessions.explainList({ ...A_TEST, limit: 21, ...query }).join('\n');

  it('page one and a cursor walk the owner index from the cursor, with no sort', async () => {
    for (const query of [{}, { beforeSeq: 40 }]) {
      const detail = plan(query);
      expect(detail).toContain(
        'SEARCH sessions USING INDEX sessions_by_owner (business_id=? AND environment=? AND seq<?)',
      );
      expect(detail).not.toContain('TEMP B-TREE');
    }
  });

  it('a status uses the (business, environment, status, seq) index of migration 006, with no sort', async () => {
    for (const query of [{ status: 'pending' as const }, { status: 'expired' as const, beforeSeq: 40 }]) {
      const detail = plan(query);
      expect(detail).toContain(
        'SEARCH sessions USING INDEX sessions_by_owner_status (business_id=? AND environment=? AND status=? AND seq<?)',
      );
      expect(detail).not.toContain('TEMP B-TREE');
    }
  });

  it('a reference (with or without a status) uses the unique reference index: one row at most', async () => {
    const uniqueReferenceIndex = (
      db.prepare('SELECT name FROM pragma_index_list(\'sessions\') WHERE "unique" = 1').all() as Array<{
        name: string;
      }>
    )
      .map((row) => row.name)
      .find((name) =>
        (db.prepare('SELECT name FROM pragma_index_info(?)').all(name) as Array<{ name: string }>)
          .map((column) => column.name)
          .join(',')
          .startsWith('business_id,environment,reference'),
      );
    expect(uniqueReferenceIndex).toBeDefined();
    for (const query of [{ reference: 'order-7' }, { reference: 'order-7', status: 'pending' as const }]) {
      expect(plan(query)).toBe(
        `SEARCH sessions USING INDEX ${uniqueReferenceIndex} (business_id=? AND environment=? AND reference=?)`,
      );
    }
  });
});
