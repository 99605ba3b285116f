import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionStatus } from '@servicepay/node/protocol';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationContext } from '../../reference-server/src/bank/notification-context.ts';
import type { NotificationAbout } from '../../reference-server/src/db/bank-notifications.ts';
import { SqlBusinessRepository } from '../../reference-server/src/db/businesses.ts';
import { openDatabase, type SqliteDatabase } from '../../reference-server/src/db/database.ts';
import {
  type IdempotencyClaim,
  IdempotencyKeyTakenError,
  SqlIdempotencyKeyRepository,
} from '../../reference-server/src/db/idempotency-keys.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import { postgresRepositoriesOn } from '../../reference-server/src/db/postgres/postgres-store.ts';
import { type Repositories, repositoriesOn } from '../../reference-server/src/db/repositories.ts';
import {
  type NewSession,
  type SessionChange,
  type SessionListQuery,
  SqlSessionRepository,
  sessionListStatement,
} from '../../reference-server/src/db/sessions.ts';
import { SqliteRunner } from '../../reference-server/src/db/sqlite-runner.ts';
import { openPool } from '../support/open-pool.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// The repositories on the session path (one implementation, `db/<name>.ts`, issue 25). Every scenario runs on
// both stores, over a real SQLite file and a real PostgreSQL, each asserted, then compared: what the service gets
// back must not depend on the store. Then, on PostgreSQL only, what one process never had to face: concurrent writers.

reportIfPostgresMissing();

/** The repositories this file covers, as the service calls them on either store. */
type SessionPath = Pick<
  Repositories,
  | 'sessions'
  | 'virtualAccounts'
  | 'widgetTokens'
  | 'idempotencyKeys'
  | 'bankNotifications'
  | 'events'
  | 'settledTransfers'
>;
type StoreName = 'sqlite' | 'postgres';

// As the service binds them: with the sessions' one-statement create (`PostgresSessionRepository`).
const postgresRepositories = (db: pg.Pool | pg.PoolClient): SessionPath => postgresRepositoriesOn(db);

const sqliteRepositories = (db: SqliteDatabase): SessionPath => repositoriesOn(new SqliteRunner(db));

const T0 = Date.parse('2026-11-23T12:00:00.000Z');
const MINUTE = 60_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** A new session of `biz_a` in test, pending, due 30 minutes after T0 unless told otherwise. */
const newSession = (id: string, overrides: Partial<NewSession> = {}): NewSession => ({
  id,
  businessId: 'biz_a',
  environment: 'test',
  reference: `order-${id}`,
  status: 'pending',
  amount: 250_000,
  currency: 'NGN',
  payerName: 'Ada Obi',
  payerEmail: 'ada@example.com',
  payerPhone: null,
  metadata: { orderId: id },
  clientSecretHash: sha256(`secret-${id}`),
  createdAt: T0,
  updatedAt: T0,
  expiresAt: T0 + 30 * MINUTE,
  ...overrides,
});

/**
 * `value` with every `seq` replaced by its rank among the `seq`s in it (1 for the smallest). The one number the
 * stores may legitimately give differently: a PostgreSQL identity hands a number to an insert that then fails
 * (a duplicate reference, an amount refused), leaving a gap SQLite's AUTOINCREMENT does not; `seq` is a cursor
 * and an order, never counted. So the stores are compared on the order of their `seq`s, and each scenario
 * asserts the exact steps where no insert failed.
 */
function bySeqOrder<T>(value: T): unknown {
  const seqs = new Set<number>();
  const collect = (node: unknown): void => {
    if (Buffer.isBuffer(node) || node === null || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      if (key === 'seq' && typeof child === 'number') seqs.add(child);
      else collect(child);
    }
  };
  collect(value);
  const rank = new Map([...seqs].sort((a, b) => a - b).map((seq, i) => [seq, i + 1]));
  const rewrite = (node: unknown): unknown => {
    if (Buffer.isBuffer(node) || node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map(rewrite);
    return Object.fromEntries(
      Object.entries(node).map(([key, child]) => [
        key,
        key === 'seq' && typeof child === 'number' ? rank.get(child) : rewrite(child),
      ]),
    );
  };
  return rewrite(value);
}

/** How a call ended, for calls a store may refuse: both stores must refuse the same calls. */
/** What `insert` stored: it answers undefined only for a used reference, which these scenarios do not reuse. */
const stored = <T>(record: T | undefined): T => {
  if (record === undefined) throw new Error('insert wrote nothing: the reference was already used');
  return record;
};

/** The session of a business and environment with this reference, read through the list's reference filter. */
const byReference = async (
  sessions: SessionPath['sessions'],
  businessId: string,
  environment: 'test' | 'live',
  reference: string,
) => (await sessions.list({ businessId, environment, reference, limit: 1 }))[0];

const outcome = (call: Promise<unknown>): Promise<'resolved' | 'rejected'> =>
  call.then(
    () => 'resolved',
    () => 'rejected',
  );

const BUSINESSES = [
  { id: 'biz_a', name: 'Shop A' },
  { id: 'biz_b', name: 'Shop B' },
  // Only the list scenario's: its owner's lists hold nothing another scenario wrote.
  { id: 'biz_c', name: 'Shop C' },
];

async function preparePostgres(pool: pg.Pool): Promise<void> {
  await migratePostgres(pool);
  // The parent rows the foreign keys ask for (sessions reference businesses), in plain SQL: the businesses
  // repository is not this file's subject.
  for (const business of BUSINESSES) {
    await pool.query(
      "INSERT INTO businesses (id, name, kyc_status, created_at) VALUES ($1, $2, 'approved', $3)",
      [business.id, business.name, T0 - MINUTE],
    );
  }
}

describe.runIf(postgresAvailable)('the session-path repositories on SQLite and on PostgreSQL', () => {
  const scratch = useScratchDatabase({ database: 'both_stores', pools: { pool: { max: 4 } } });
  let sqliteDir: string;
  let sqlite: SqliteDatabase;
  const stores = {} as Record<StoreName, SessionPath>;

  beforeAll(async () => {
    sqliteDir = mkdtempSync(join(tmpdir(), 'servicepay-session-repositories-'));
    sqlite = openDatabase(join(sqliteDir, 'servicepay.db'));
    const businesses = new SqlBusinessRepository(new SqliteRunner(sqlite));
    for (const business of BUSINESSES) {
      await businesses.insert({ ...business, kycApproved: true, createdAt: T0 - MINUTE });
    }
    stores.sqlite = sqliteRepositories(sqlite);

    await preparePostgres(scratch.pool);
    stores.postgres = postgresRepositories(scratch.pool);
  });

  afterAll(async () => {
    sqlite?.close();
    if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
  });

  /**
   * Runs `scenario` on SQLite, then on PostgreSQL (each asserting what it expects), and requires both to have
   * answered exactly the same values: same fields, same types, null where null and absent where absent.
   */
  async function onBothStores<T>(scenario: (repositories: SessionPath) => Promise<T>) {
    const fromSqlite = await scenario(stores.sqlite);
    const fromPostgres = await scenario(stores.postgres);
    expect(bySeqOrder(fromPostgres)).toStrictEqual(bySeqOrder(fromSqlite));
    return fromSqlite;
  }

  it('sessions: insert answers the stored record, and find, findByClientSecretHash and the reference filter read it back', async () => {
    const seen = await onBothStores(async ({ sessions }) => {
      const inserted = stored(
        await sessions.insert(
          newSession('ses_find', { payerPhone: '+2348012345678', metadata: { orderId: '7', note: 'gift' } }),
        ),
      );
      const other = stored(await sessions.insert(newSession('ses_find_other')));
      expect(inserted).toMatchObject({
        id: 'ses_find',
        amount: 250_000,
        currency: 'NGN',
        status: 'pending',
        clientSecretUsedAt: null,
        accountNumber: null,
        mismatchReceived: null,
        paidAt: null,
      });
      expect(other.seq).toBe(inserted.seq + 1);
      const found = await sessions.find('ses_find');
      // What insert answered is what a read gets: no field the store adds or changes.
      expect(found).toStrictEqual(inserted);
      expect(found?.clientSecretHash).toBeInstanceOf(Buffer);
      expect(await sessions.findByClientSecretHash(sha256('secret-ses_find'))).toStrictEqual(inserted);
      expect(await byReference(sessions, 'biz_a', 'test', 'order-ses_find')).toStrictEqual(inserted);
      return {
        inserted,
        other,
        unknownId: await sessions.find('ses_nobody'),
        unknownHash: await sessions.findByClientSecretHash(sha256('no such secret')),
        otherEnvironment: await byReference(sessions, 'biz_a', 'live', 'order-ses_find'),
        otherBusiness: await byReference(sessions, 'biz_b', 'test', 'order-ses_find'),
      };
    });
    expect(seen.unknownId).toBeUndefined();
    expect(seen.unknownHash).toBeUndefined();
    expect(seen.otherEnvironment).toBeUndefined();
    expect(seen.otherBusiness).toBeUndefined();
    expect(seen.inserted.metadata).toEqual({ orderId: '7', note: 'gift' });
    expect(seen.inserted.payerPhone).toBe('+2348012345678');
  });

  it('sessions: a reference is unique per business and environment on both stores: insert writes nothing for a used one', async () => {
    const seen = await onBothStores(async ({ sessions }) => {
      await sessions.insert(newSession('ses_ref_1', { reference: 'order-unique' }));
      return {
        sameOwner: await sessions.insert(newSession('ses_ref_2', { reference: 'order-unique' })),
        sameOwnerStored: await sessions.find('ses_ref_2'),
        otherEnvironment: (
          await sessions.insert(newSession('ses_ref_3', { reference: 'order-unique', environment: 'live' }))
        )?.id,
        otherBusiness: (
          await sessions.insert(newSession('ses_ref_4', { reference: 'order-unique', businessId: 'biz_b' }))
        )?.id,
        // Only the reference is let pass quietly: any other duplicate (here the id) is still an error.
        sameId: await outcome(sessions.insert(newSession('ses_ref_1', { reference: 'order-other' }))),
        kept: (await byReference(sessions, 'biz_a', 'test', 'order-unique'))?.id,
      };
    });
    expect(seen).toEqual({
      sameOwner: undefined,
      sameOwnerStored: undefined,
      otherEnvironment: 'ses_ref_3',
      otherBusiness: 'ses_ref_4',
      sameId: 'rejected',
      kept: 'ses_ref_1',
    });
  });

  it('sessions: insertAnswered writes the session and its Idempotency-Key answer together, or neither (issue 38)', async () => {
    // After every key the idempotency scenario's purge reaches (it purges up to T0 + 5 minutes).
    const LATER = T0 + 10 * MINUTE;
    const claim = (key: string, claimedAt: number, body: string): IdempotencyClaim => ({
      entry: { scope: 'biz_a:test', key, createdAt: claimedAt },
      response: { requestHash: sha256(`POST ${key}`), statusCode: 201, responseBody: body },
      notBefore: claimedAt - 24 * 60 * MINUTE,
    });
    const seen = await onBothStores(async (repositories) => {
      const { sessions, idempotencyKeys } = repositories;
      // Inside a transaction, as the service calls it (in a write job): on SQLite the two statements are undone
      // together by it; on PostgreSQL the one statement is its own transaction.
      const inTransaction = async <T>(write: () => Promise<T>): Promise<T> => {
        if (repositories !== stores.sqlite) return write();
        sqlite.exec('BEGIN');
        try {
          const value = await write();
          sqlite.exec('COMMIT');
          return value;
        } catch (error) {
          sqlite.exec('ROLLBACK');
          throw error;
        }
      };
      const made = stored(
        await sessions.insertAnswered(newSession('ses_ans_1'), claim('k-ans-1', LATER, 'first')),
      );
      // A used reference: undefined, and the key is not taken.
      const usedReference = await sessions.insertAnswered(
        newSession('ses_ans_2', { reference: 'order-ses_ans_1' }),
        claim('k-ans-2', LATER, 'second'),
      );
      // A key a live row holds: refused, and the session is not made.
      const heldKey = await inTransaction(() =>
        sessions.insertAnswered(newSession('ses_ans_3'), claim('k-ans-1', LATER + MINUTE, 'third')),
      ).then(
        () => 'resolved',
        (error: unknown) => (error instanceof IdempotencyKeyTakenError ? 'key taken' : String(error)),
      );
      // A row older than the TTL is taken over, with the new session.
      await idempotencyKeys.remember(
        { scope: 'biz_a:test', key: 'k-ans-stale', createdAt: LATER - 25 * 60 * MINUTE },
        { requestHash: sha256('old'), statusCode: 201, responseBody: 'stale' },
      );
      const overStale = stored(
        await sessions.insertAnswered(newSession('ses_ans_4'), claim('k-ans-stale', LATER, 'fourth')),
      );
      const notBefore = LATER - 24 * 60 * MINUTE;
      return {
        made: { id: made.id, amount: made.amount, reference: made.reference, seq: made.seq },
        remembered: (await idempotencyKeys.find('biz_a:test', 'k-ans-1', notBefore))?.responseBody,
        usedReference,
        secondKey: await idempotencyKeys.find('biz_a:test', 'k-ans-2', notBefore),
        heldKey,
        thirdSession: await sessions.find('ses_ans_3'),
        firstAnswerKept: (await idempotencyKeys.find('biz_a:test', 'k-ans-1', notBefore))?.responseBody,
        overStale: overStale.id,
        takenOver: (await idempotencyKeys.find('biz_a:test', 'k-ans-stale', notBefore))?.responseBody,
      };
    });
    expect(seen).toMatchObject({
      made: { id: 'ses_ans_1', amount: 250_000, reference: 'order-ses_ans_1' },
      remembered: 'first',
      usedReference: undefined,
      secondKey: undefined,
      heldKey: 'key taken',
      thirdSession: undefined,
      firstAnswerKept: 'first',
      overStale: 'ses_ans_4',
      takenOver: 'fourth',
    });
  });

  it('sessions: list pages newest first from the cursor, by status, by reference, within the owner only', async () => {
    const statuses: SessionStatus[] = ['pending', 'awaiting_payment', 'successful', 'expired', 'cancelled'];
    const seen = await onBothStores(async ({ sessions }) => {
      // Twelve sessions for each of three owners, interleaved, statuses in turn; the lists' owner is biz_c/test.
      for (let i = 0; i < 12; i++) {
        for (const [businessId, environment] of [
          ['biz_c', 'test'],
          ['biz_a', 'test'],
          ['biz_c', 'live'],
        ] as const) {
          await sessions.insert(
            newSession(`ses_list_${businessId}_${environment}_${i}`, {
              businessId,
              environment,
              reference: `list-${i}`,
              status: statuses[i % statuses.length] as SessionStatus,
              amount: 1_000 + i,
            }),
          );
        }
      }
      const owner = { businessId: 'biz_c', environment: 'test' } as const;
      const ids = async (query: SessionListQuery) => (await sessions.list(query)).map((s) => s.id);
      const firstPage = await sessions.list({ ...owner, limit: 4 });
      const cursor = firstPage.at(-1)?.seq;
      return {
        firstPage,
        secondPage: await ids({ ...owner, limit: 4, beforeSeq: cursor }),
        everything: await ids({ ...owner, limit: 100 }),
        successful: await ids({ ...owner, status: 'successful', limit: 100 }),
        successfulAfterCursor: await ids({
          ...owner,
          status: 'successful',
          limit: 100,
          beforeSeq: (await sessions.find('ses_list_biz_c_test_7'))?.seq,
        }),
        byReference: await ids({ ...owner, reference: 'list-3', limit: 100 }),
        byReferenceAndStatus: await ids({ ...owner, reference: 'list-3', status: 'expired', limit: 100 }),
        byReferenceWrongStatus: await ids({ ...owner, reference: 'list-3', status: 'pending', limit: 100 }),
        byReferenceBeforeItself: await ids({
          ...owner,
          reference: 'list-3',
          limit: 100,
          beforeSeq: (await sessions.find('ses_list_biz_c_test_3'))?.seq,
        }),
        unknownReference: await ids({ ...owner, reference: 'list-99', limit: 100 }),
        otherOwnerLive: await ids({
          businessId: 'biz_c',
          environment: 'live',
          status: 'cancelled',
          limit: 100,
        }),
      };
    });
    const b = (i: number) => `ses_list_biz_c_test_${i}`;
    expect(seen.firstPage.map((s) => s.id)).toEqual([b(11), b(10), b(9), b(8)]);
    expect(seen.firstPage.map((s) => s.amount)).toEqual([1_011, 1_010, 1_009, 1_008]);
    expect(seen.secondPage).toEqual([b(7), b(6), b(5), b(4)]);
    expect(seen.everything).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0].map(b));
    expect(seen.successful).toEqual([b(7), b(2)]);
    expect(seen.successfulAfterCursor).toEqual([b(2)]);
    expect(seen.byReference).toEqual([b(3)]);
    expect(seen.byReferenceAndStatus).toEqual([b(3)]);
    expect(seen.byReferenceWrongStatus).toEqual([]);
    expect(seen.byReferenceBeforeItself).toEqual([]);
    expect(seen.unknownReference).toEqual([]);
    expect(seen.otherOwnerLive).toEqual(['ses_list_biz_c_live_9', 'ses_list_biz_c_live_4']);
  });

  it('sessions: change applies only to the session as read (status and account), and returns the session as changed', async () => {
    const seen = await onBothStores(async ({ sessions }) => {
      await sessions.insert(newSession('ses_change'));
      const toAwaiting: SessionChange = {
        status: 'awaiting_payment',
        updatedAt: T0 + 1_000,
        accountNumber: '9900000001',
        mismatchReceived: null,
        paidAt: null,
      };
      const first = await sessions.change(
        'ses_change',
        { status: 'pending', accountNumber: null },
        toAwaiting,
      );
      const again = await sessions.change(
        'ses_change',
        { status: 'pending', accountNumber: null },
        { ...toAwaiting, updatedAt: T0 + 2_000 },
      );
      const afterAwaiting = await sessions.find('ses_change');
      // The right status, another account: a writer that read the session before it moved to this account.
      const staleAccount = await sessions.change(
        'ses_change',
        { status: 'awaiting_payment', accountNumber: '9900000999' },
        { ...toAwaiting, accountNumber: '9900000002', updatedAt: T0 + 2_500 },
      );
      const mismatch = await sessions.change(
        'ses_change',
        { status: 'awaiting_payment', accountNumber: '9900000001' },
        {
          status: 'mismatch',
          updatedAt: T0 + 3_000,
          accountNumber: '9900000001',
          mismatchReceived: 200_000,
          paidAt: null,
        },
      );
      const paid = await sessions.change(
        'ses_change',
        { status: 'mismatch', accountNumber: '9900000001' },
        {
          status: 'successful',
          updatedAt: T0 + 4_000,
          accountNumber: '9900000001',
          mismatchReceived: null,
          paidAt: T0 + 4_000,
        },
      );
      const cancelAfterPaid = await sessions.change(
        'ses_change',
        { status: 'awaiting_payment', accountNumber: '9900000001' },
        {
          status: 'cancelled',
          updatedAt: T0 + 5_000,
          accountNumber: null,
          mismatchReceived: null,
          paidAt: null,
        },
      );
      const unknown = await sessions.change(
        'ses_nobody',
        { status: 'pending', accountNumber: null },
        toAwaiting,
      );
      return {
        first,
        again,
        afterAwaiting,
        staleAccount,
        mismatch,
        paid,
        cancelAfterPaid,
        unknown,
        final: await sessions.find('ses_change'),
      };
    });
    // Refused changes return nothing; an applied one returns the whole row as a read after it would.
    expect(seen).toMatchObject({
      again: undefined,
      staleAccount: undefined,
      cancelAfterPaid: undefined,
      unknown: undefined,
    });
    expect(seen.first).toEqual(seen.afterAwaiting);
    expect(seen.mismatch).toMatchObject({
      status: 'mismatch',
      updatedAt: T0 + 3_000,
      mismatchReceived: 200_000,
      paidAt: null,
    });
    expect(seen.paid).toEqual(seen.final);
    expect(seen.afterAwaiting).toMatchObject({
      status: 'awaiting_payment',
      updatedAt: T0 + 1_000,
      accountNumber: '9900000001',
    });
    expect(seen.final).toMatchObject({
      status: 'successful',
      updatedAt: T0 + 4_000,
      accountNumber: '9900000001',
      mismatchReceived: null,
      paidAt: T0 + 4_000,
      amount: 250_000,
    });
  });

  it('sessions: the client secret is exchanged once; the first time is kept', async () => {
    const seen = await onBothStores(async ({ sessions }) => {
      await sessions.insert(newSession('ses_secret'));
      return {
        first: await sessions.markClientSecretUsed('ses_secret', T0 + 10),
        second: await sessions.markClientSecretUsed('ses_secret', T0 + 20),
        unknown: await sessions.markClientSecretUsed('ses_nobody', T0 + 30),
        usedAt: (await sessions.find('ses_secret'))?.clientSecretUsedAt,
      };
    });
    expect(seen).toEqual({ first: true, second: false, unknown: false, usedAt: T0 + 10 });
  });

  it('sessions: overdue gives open sessions past their deadline, earliest first, ties in creation order', async () => {
    const seen = await onBothStores(async ({ sessions }) => {
      // Due before T0, unlike every other session in this file (due at T0 + 30 min).
      const due = [
        ['ses_due_late', T0 - 1_000, 'awaiting_payment'],
        ['ses_due_tie_1', T0 - 5_000, 'pending'],
        ['ses_due_tie_2', T0 - 5_000, 'mismatch'],
        ['ses_due_paid', T0 - 9_000, 'successful'],
        ['ses_due_early', T0 - 8_000, 'pending'],
        ['ses_due_cancelled', T0 - 9_500, 'cancelled'],
      ] as const;
      for (const [id, expiresAt, status] of due) await sessions.insert(newSession(id, { expiresAt, status }));
      const ids = async (now: number, limit: number) => (await sessions.overdue(now, limit)).map((s) => s.id);
      return {
        all: await ids(T0 - 1, 10),
        limited: await ids(T0 - 1, 2),
        atDeadline: await ids(T0 - 5_000, 10),
        records: await sessions.overdue(T0 - 8_000, 10),
      };
    });
    expect(seen.all).toEqual(['ses_due_early', 'ses_due_tie_1', 'ses_due_tie_2', 'ses_due_late']);
    expect(seen.limited).toEqual(['ses_due_early', 'ses_due_tie_1']);
    expect(seen.atDeadline).toEqual(['ses_due_early', 'ses_due_tie_1', 'ses_due_tie_2']);
    expect(seen.records).toHaveLength(1);
    expect(seen.records[0]).toMatchObject({ id: 'ses_due_early', expiresAt: T0 - 8_000, status: 'pending' });
  });

  it('virtual accounts: insert, find, close once, overdue open accounts only', async () => {
    const seen = await onBothStores(async ({ sessions, virtualAccounts }) => {
      await sessions.insert(newSession('ses_accounts'));
      const account = (accountNumber: string, expiresAt: number, createdAt = T0 - 60_000) => ({
        accountNumber,
        sessionId: 'ses_accounts',
        bankName: 'Simulated Bank',
        accountName: 'ServicePay / Shop A',
        createdAt,
        expiresAt,
      });
      await virtualAccounts.insert(account('9900000101', T0 - 3_000));
      await virtualAccounts.insert(account('9900000103', T0 - 2_000, T0 - 60_001));
      await virtualAccounts.insert(account('9900000102', T0 - 2_000));
      await virtualAccounts.insert(account('9900000104', T0 + 30 * MINUTE));
      const duplicate = await outcome(virtualAccounts.insert(account('9900000101', T0)));
      const orphan = await outcome(
        virtualAccounts.insert({ ...account('9900000199', T0), sessionId: 'ses_x' }),
      );
      await virtualAccounts.close('9900000101', T0 - 500);
      await virtualAccounts.close('9900000101', T0 - 100);
      await virtualAccounts.close('9900000199', T0);
      return {
        duplicate,
        orphan,
        found: await virtualAccounts.find('9900000102'),
        closed: await virtualAccounts.find('9900000101'),
        unknown: await virtualAccounts.find('9900000199'),
        overdue: await virtualAccounts.overdue(T0, 10),
        overdueLimited: (await virtualAccounts.overdue(T0, 1)).map((a) => a.accountNumber),
      };
    });
    expect(seen.duplicate).toBe('rejected');
    expect(seen.orphan).toBe('rejected');
    expect(seen.found).toStrictEqual({
      accountNumber: '9900000102',
      sessionId: 'ses_accounts',
      bankName: 'Simulated Bank',
      accountName: 'ServicePay / Shop A',
      createdAt: T0 - 60_000,
      expiresAt: T0 - 2_000,
      closedAt: null,
    });
    expect(seen.closed?.closedAt).toBe(T0 - 500);
    expect(seen.unknown).toBeUndefined();
    // Same deadline: the one created first comes first (SQLite by rowid, PostgreSQL by created_at).
    expect(seen.overdue.map((a) => a.accountNumber)).toEqual(['9900000103', '9900000102']);
    expect(seen.overdueLimited).toEqual(['9900000103']);
  });

  it('widget tokens: found by hash only, once per hash', async () => {
    const seen = await onBothStores(async ({ sessions, widgetTokens }) => {
      await sessions.insert(newSession('ses_widget'));
      const token = {
        tokenHash: sha256('wt_secret'),
        sessionId: 'ses_widget',
        createdAt: T0,
        expiresAt: T0 + 30 * MINUTE,
      };
      await widgetTokens.insert(token);
      return {
        found: await widgetTokens.findByHash(sha256('wt_secret')),
        unknown: await widgetTokens.findByHash(sha256('wt_other')),
        duplicate: await outcome(widgetTokens.insert({ ...token, createdAt: T0 + 1 })),
        orphan: await outcome(widgetTokens.insert({ ...token, tokenHash: sha256('x'), sessionId: 'ses_x' })),
      };
    });
    expect(seen.found).toStrictEqual({
      tokenHash: sha256('wt_secret'),
      sessionId: 'ses_widget',
      createdAt: T0,
      expiresAt: T0 + 30 * MINUTE,
    });
    expect(seen.found?.tokenHash).toBeInstanceOf(Buffer);
    expect(seen.unknown).toBeUndefined();
    expect(seen).toMatchObject({ duplicate: 'rejected', orphan: 'rejected' });
  });

  it('idempotency keys: find, claim once, remember, forget, purge', async () => {
    const TTL = 24 * 60 * MINUTE;
    const answer = (body: string, statusCode = 201) => ({
      requestHash: sha256(`POST /api/widget/sessions ${body}`),
      statusCode,
      responseBody: `sealed:${body}`,
    });
    const seen = await onBothStores(async ({ idempotencyKeys: keys }) => {
      const scope = 'biz_a:test';
      const now = T0 + 5 * MINUTE;
      const before = await keys.find(scope, 'order-1', now - TTL);
      const claimed = await keys.claim({ scope, key: 'order-1', createdAt: now }, answer('a'), now - TTL);
      const claimedAgain = await keys.claim(
        { scope, key: 'order-1', createdAt: now + 1 },
        answer('b'),
        now - TTL,
      );
      const otherScope = await keys.claim(
        { scope: 'biz_b:test', key: 'order-1', createdAt: now },
        answer('c'),
        now - TTL,
      );
      const afterClaims = await keys.find(scope, 'order-1', now - TTL);
      // The same row seen with a notBefore past its creation is no longer live.
      const pastTtl = await keys.find(scope, 'order-1', now);
      // A row older than the TTL that no purge removed yet: a claim takes it over.
      await keys.remember({ scope, key: 'stale', createdAt: now - TTL - 1 }, answer('old', 200));
      const staleClaimed = await keys.claim(
        { scope, key: 'stale', createdAt: now },
        answer('new'),
        now - TTL,
      );
      const staleAfter = await keys.find(scope, 'stale', now - TTL);
      // remember overwrites whatever the key held (the pending mark, then the answer).
      await keys.remember({ scope, key: 'order-2', createdAt: now }, answer('pending', 0));
      await keys.remember({ scope, key: 'order-2', createdAt: now }, answer('done', 201));
      const remembered = await keys.find(scope, 'order-2', now - TTL);
      await keys.forget(scope, 'order-2');
      const forgotten = await keys.find(scope, 'order-2', now - TTL);
      const reclaimed = await keys.claim(
        { scope, key: 'order-2', createdAt: now },
        answer('again'),
        now - TTL,
      );
      await keys.remember(
        { scope: 'session:ses_1', key: 'k', createdAt: T0 - 2 * TTL },
        answer('older', 200),
      );
      const purged = await keys.purge(now - TTL);
      const purgedNone = await keys.purge(now - TTL);
      const purgedAll = await keys.purge(now);
      return {
        before,
        claimed,
        claimedAgain,
        otherScope,
        afterClaims,
        pastTtl,
        staleClaimed,
        staleAfter,
        remembered,
        forgotten,
        reclaimed,
        purged,
        purgedNone,
        purgedAll,
      };
    });
    expect(seen).toMatchObject({
      before: undefined,
      claimed: true,
      claimedAgain: false,
      otherScope: true,
      pastTtl: undefined,
      staleClaimed: true,
      forgotten: undefined,
      reclaimed: true,
      purged: 1,
      purgedNone: 0,
      // order-1 (biz_a and biz_b), stale, order-2.
      purgedAll: 4,
    });
    // The first claim's answer, not the second's.
    expect(seen.afterClaims).toStrictEqual(answer('a'));
    expect(seen.afterClaims?.requestHash).toBeInstanceOf(Buffer);
    expect(seen.staleAfter).toStrictEqual(answer('new'));
    expect(seen.remembered).toStrictEqual(answer('done', 201));
  });

  it('events: seq in insertion order, forSessionAfter and lastForSession per session', async () => {
    const seen = await onBothStores(async ({ sessions, events }) => {
      await sessions.insert(newSession('ses_events_a'));
      await sessions.insert(newSession('ses_events_b'));
      const event = (id: string, sessionId: string, type: string, at: number) => ({
        id,
        businessId: 'biz_a',
        environment: 'test' as const,
        sessionId,
        type,
        reason: null,
        payload: JSON.stringify({ id: sessionId, status: type.slice('session.'.length) }),
        createdAt: at,
      });
      const a1 = await events.insert(event('evt_a1', 'ses_events_a', 'session.awaiting_payment', T0 + 1));
      const b1 = await events.insert(event('evt_b1', 'ses_events_b', 'session.awaiting_payment', T0 + 2));
      const a2 = await events.insert({
        ...event('evt_a2', 'ses_events_a', 'session.credit_unapplied', T0 + 3),
        reason: 'amount_mismatch',
        credit: JSON.stringify({ amount: 1_000, currency: 'NGN' }),
      });
      const a3 = await events.insert(event('evt_a3', 'ses_events_a', 'session.successful', T0 + 4));
      return {
        inserted: [a1, b1, a2, a3],
        found: await events.find('evt_a1'),
        foundWithCredit: await events.find('evt_a2'),
        unknown: await events.find('evt_nobody'),
        allOfA: await events.forSessionAfter('ses_events_a', 0),
        afterFirst: (await events.forSessionAfter('ses_events_a', a1.seq)).map((e) => e.id),
        afterLast: await events.forSessionAfter('ses_events_a', a3.seq),
        lastOfA: await events.lastForSession('ses_events_a'),
        lastOfB: (await events.lastForSession('ses_events_b'))?.id,
        lastOfNone: await events.lastForSession('ses_nobody'),
        duplicateId: await outcome(events.insert(event('evt_a1', 'ses_events_b', 'session.expired', T0 + 5))),
      };
    });
    const [a1, b1, a2, a3] = seen.inserted as [
      (typeof seen.inserted)[0],
      (typeof seen.inserted)[0],
      (typeof seen.inserted)[0],
      (typeof seen.inserted)[0],
    ];
    expect([b1.seq, a2.seq, a3.seq]).toEqual([a1.seq + 1, a1.seq + 2, a1.seq + 3]);
    // insert answers the event as stored: its seq, and `credit` null when none was given.
    expect(a1.credit).toBeNull();
    expect(a2.credit).toBe(JSON.stringify({ amount: 1_000, currency: 'NGN' }));
    expect(seen.found).toStrictEqual(a1);
    expect(seen.foundWithCredit).toStrictEqual(a2);
    expect(seen.unknown).toBeUndefined();
    expect(seen.allOfA.map((e) => [e.id, e.seq])).toEqual([
      ['evt_a1', a1.seq],
      ['evt_a2', a2.seq],
      ['evt_a3', a3.seq],
    ]);
    expect(seen.afterFirst).toEqual(['evt_a2', 'evt_a3']);
    expect(seen.afterLast).toEqual([]);
    expect(seen.lastOfA).toStrictEqual(a3);
    expect(seen.lastOfB).toBe('evt_b1');
    expect(seen.lastOfNone).toBeUndefined();
    expect(seen.duplicateId).toBe('rejected');
  });

  it('bank notifications and settled transfers: once per id, a second insert of an id is refused and the first kept', async () => {
    const seen = await onBothStores(async ({ bankNotifications, settledTransfers }) => {
      const notification = {
        id: 'ntf_1',
        transferId: 'trf_1',
        accountNumber: '9900000201',
        sessionId: 'ses_paid_somewhere',
        amount: 250_000,
        currency: 'NGN',
        bankOutcome: 'credited',
        result: 'credited' as const,
        receivedAt: T0,
      };
      await bankNotifications.insert(notification);
      const transfer = {
        transferId: 'trf_1',
        accountNumber: '9900000201',
        sessionId: 'ses_paid_somewhere',
        amount: 250_000,
        currency: 'NGN',
        bankOutcome: 'credited',
        result: 'credited' as const,
        source: 'notification' as const,
        settledAt: T0,
      };
      await settledTransfers.insert(transfer);
      await bankNotifications.insert({ ...notification, id: 'ntf_unknown', result: 'unknown_account' });
      await settledTransfers.insert({
        ...transfer,
        transferId: 'trf_2',
        sessionId: null,
        result: 'unapplied',
      });
      return {
        notificationAgain: await outcome(bankNotifications.insert({ ...notification, result: 'mismatch' })),
        transferAgain: await outcome(
          settledTransfers.insert({ ...transfer, result: 'not_credited', source: 'account_close' }),
        ),
        notificationResult: await bankNotifications.findResult('ntf_1'),
        unknownAccountResult: await bankNotifications.findResult('ntf_unknown'),
        transferResult: await settledTransfers.findResult('trf_1'),
        unappliedResult: await settledTransfers.findResult('trf_2'),
        neverSeenNotification: await bankNotifications.findResult('ntf_nobody'),
        neverSeenTransfer: await settledTransfers.findResult('trf_nobody'),
      };
    });
    expect(seen).toStrictEqual({
      notificationAgain: 'rejected',
      transferAgain: 'rejected',
      notificationResult: 'credited',
      unknownAccountResult: 'unknown_account',
      transferResult: 'credited',
      unappliedResult: 'unapplied',
      neverSeenNotification: undefined,
      neverSeenTransfer: undefined,
    });
  });

  it('bank notifications: notificationContext reads the recorded results, the account and its session (one statement on PostgreSQL), each as its own read gives it (issue 38)', async () => {
    const seen = await onBothStores(async (repositories) => {
      const { sessions, virtualAccounts, bankNotifications, settledTransfers } = repositories;
      const findContext = (about: NotificationAbout) => notificationContext(repositories, about);
      await sessions.insert(newSession('ses_context', { metadata: { orderId: 'A-1', gift: 'yes' } }));
      await virtualAccounts.insert({
        accountNumber: '9900000301',
        sessionId: 'ses_context',
        bankName: 'Simulated Bank',
        accountName: 'ServicePay / Shop A',
        createdAt: T0,
        expiresAt: T0 + 30 * MINUTE,
      });
      const about = { id: 'ntf_context', transferId: 'trf_context', accountNumber: '9900000301' };
      const before = await findContext(about);
      await settledTransfers.insert({
        transferId: 'trf_context',
        accountNumber: '9900000301',
        sessionId: 'ses_context',
        amount: 250_000,
        currency: 'NGN',
        bankOutcome: 'credited',
        result: 'credited',
        source: 'notification',
        settledAt: T0,
      });
      await bankNotifications.insert({
        ...about,
        sessionId: 'ses_context',
        amount: 250_000,
        currency: 'NGN',
        bankOutcome: 'credited',
        result: 'mismatch',
        receivedAt: T0,
      });
      await virtualAccounts.close('9900000301', T0 + 1_000);
      const after = await findContext(about);
      // Each part on its own: another notification of the transfer, an account nobody opened.
      const otherNotification = await findContext({ ...about, id: 'ntf_other' });
      const unknownAccount = await findContext({
        id: 'ntf_nowhere',
        transferId: 'trf_nowhere',
        accountNumber: '9900000399',
      });
      return {
        before,
        after,
        otherNotification,
        unknownAccount,
        account: await virtualAccounts.find('9900000301'),
        session: await sessions.find('ses_context'),
      };
    });
    expect(seen.before.known).toBeUndefined();
    expect(seen.before.settled).toBeUndefined();
    expect(seen.before.account).toStrictEqual({ ...seen.account, closedAt: null });
    expect(seen.before.session).toStrictEqual(seen.session);
    expect(seen.session?.metadata).toEqual({ orderId: 'A-1', gift: 'yes' });
    expect(Buffer.isBuffer(seen.before.session?.clientSecretHash)).toBe(true);
    expect(seen.after).toStrictEqual({
      known: 'mismatch',
      settled: 'credited',
      account: seen.account,
      session: seen.session,
    });
    expect(seen.account?.closedAt).toBe(T0 + 1_000);
    expect(seen.otherNotification).toStrictEqual({ ...seen.after, known: undefined });
    expect(seen.unknownAccount).toStrictEqual({
      known: undefined,
      settled: undefined,
      account: undefined,
      session: undefined,
    });
  });

  it('money: amounts up to Number.MAX_SAFE_INTEGER and their currencies come back exactly; zero and fractions are refused', async () => {
    const LARGEST = Number.MAX_SAFE_INTEGER; // 9_007_199_254_740_991, the contract's maximum amount
    const seen = await onBothStores(async ({ sessions, bankNotifications, settledTransfers }) => {
      const large = stored(
        await sessions.insert(
          newSession('ses_money_large', { amount: LARGEST, currency: 'USD', reference: 'money-large' }),
        ),
      );
      const smallest = stored(
        await sessions.insert(
          newSession('ses_money_small', { amount: 1, currency: 'GHS', reference: 'money-small' }),
        ),
      );
      await sessions.change(
        'ses_money_large',
        { status: 'pending', accountNumber: null },
        {
          status: 'mismatch',
          updatedAt: T0 + 1,
          accountNumber: '9900000301',
          mismatchReceived: LARGEST - 1,
          paidAt: null,
        },
      );
      await bankNotifications.insert({
        id: 'ntf_money',
        transferId: 'trf_money',
        accountNumber: '9900000301',
        sessionId: 'ses_money_large',
        amount: LARGEST - 1,
        currency: 'USD',
        bankOutcome: 'credited',
        result: 'mismatch',
        receivedAt: T0 + 1,
      });
      await settledTransfers.insert({
        transferId: 'trf_money',
        accountNumber: '9900000301',
        sessionId: 'ses_money_large',
        amount: LARGEST - 1,
        currency: 'USD',
        bankOutcome: 'credited',
        result: 'mismatch',
        source: 'notification',
        settledAt: T0 + 1,
      });
      return {
        large,
        smallest,
        largeRead: await sessions.find('ses_money_large'),
        smallestRead: await sessions.find('ses_money_small'),
        zero: await outcome(
          sessions.insert(newSession('ses_money_zero', { amount: 0, reference: 'money-0' })),
        ),
        negative: await outcome(
          sessions.insert(newSession('ses_money_negative', { amount: -5, reference: 'money-neg' })),
        ),
        fraction: await outcome(
          sessions.insert(newSession('ses_money_fraction', { amount: 1.5, reference: 'money-frac' })),
        ),
      };
    });
    expect(seen.large.amount).toBe(9_007_199_254_740_991);
    expect(seen.largeRead).toMatchObject({
      amount: 9_007_199_254_740_991,
      currency: 'USD',
      mismatchReceived: 9_007_199_254_740_990,
      status: 'mismatch',
    });
    expect(seen.smallestRead).toMatchObject({ amount: 1, currency: 'GHS' });
    expect(seen).toMatchObject({ zero: 'rejected', negative: 'rejected', fraction: 'rejected' });
  });
});

describe.runIf(postgresAvailable)('the session-path repositories on PostgreSQL only', () => {
  // 20 "instances" at once need 20 connections, plus the pool's reads.
  const scratch = useScratchDatabase({ database: 'postgres_only', pools: { pool: { max: 24 } } });

  beforeAll(() => preparePostgres(scratch.pool));

  /**
   * `count` write transactions on separate pool clients, as `count` instances would run them: each opens its
   * transaction and does `read`; only when every one has read does any of them `write`, and each commits right
   * after its write. So every writer has seen the same state before the first commit.
   */
  async function concurrently<R, W>(
    count: number,
    read: (repositories: SessionPath, index: number) => Promise<R>,
    write: (repositories: SessionPath, index: number) => Promise<W>,
  ): Promise<{ reads: R[]; writes: W[] }> {
    const clients = await Promise.all(Array.from({ length: count }, () => scratch.pool.connect()));
    try {
      await Promise.all(clients.map((client) => client.query('BEGIN')));
      const reads = await Promise.all(clients.map((client, i) => read(postgresRepositories(client), i)));
      const writes = await Promise.all(
        clients.map(async (client, i) => {
          const written = await write(postgresRepositories(client), i);
          await client.query('COMMIT');
          return written;
        }),
      );
      return { reads, writes };
    } finally {
      for (const client of clients) client.release();
    }
  }

  it('20 concurrent change(id, awaiting_payment → successful) from separate clients: exactly one gets the session back, its change kept', async () => {
    const sessions = new SqlSessionRepository(new PostgresRunner(scratch.pool));
    await sessions.insert(newSession('ses_race'));
    await sessions.change(
      'ses_race',
      { status: 'pending', accountNumber: null },
      {
        status: 'awaiting_payment',
        updatedAt: T0 + 1,
        accountNumber: '9900000401',
        mismatchReceived: null,
        paidAt: null,
      },
    );
    const { reads, writes } = await concurrently(
      20,
      async (repositories) => (await repositories.sessions.find('ses_race'))?.status,
      (repositories, i) =>
        repositories.sessions.change(
          'ses_race',
          { status: 'awaiting_payment', accountNumber: '9900000401' },
          {
            status: 'successful',
            updatedAt: T0 + 100 + i,
            accountNumber: '9900000401',
            mismatchReceived: null,
            paidAt: T0 + 100 + i,
          },
        ),
    );
    // Every instance read awaiting_payment: a read-then-write would have paid the session 20 times.
    expect(reads).toEqual(Array(20).fill('awaiting_payment'));
    expect(writes.filter(Boolean)).toHaveLength(1);
    const winner = writes.findIndex(Boolean);
    expect(writes[winner]).toEqual(await sessions.find('ses_race'));
    expect(await sessions.find('ses_race')).toMatchObject({
      status: 'successful',
      updatedAt: T0 + 100 + winner,
      paidAt: T0 + 100 + winner,
    });
  });

  it('20 concurrent markClientSecretUsed of one session: exactly one true', async () => {
    const sessions = new SqlSessionRepository(new PostgresRunner(scratch.pool));
    await sessions.insert(newSession('ses_secret_race'));
    const { writes } = await concurrently(
      20,
      async () => undefined,
      (repositories, i) => repositories.sessions.markClientSecretUsed('ses_secret_race', T0 + i),
    );
    expect(writes.filter(Boolean)).toHaveLength(1);
    expect((await sessions.find('ses_secret_race'))?.clientSecretUsedAt).toBe(T0 + writes.indexOf(true));
  });

  it('20 concurrent claims of one idempotency key: one winner, whose answer is kept; the same over a stale row', async () => {
    const TTL = 24 * 60 * MINUTE;
    const now = T0 + MINUTE;
    const answer = (i: number) => ({
      requestHash: sha256(`request ${i}`),
      statusCode: 201,
      responseBody: `sealed:${i}`,
    });
    const keys = new SqlIdempotencyKeyRepository(new PostgresRunner(scratch.pool));
    for (const key of ['fresh', 'stale']) {
      if (key === 'stale') {
        await keys.remember({ scope: 'biz_a:test', key, createdAt: now - TTL - 1 }, answer(-1));
      }
      const { reads, writes } = await concurrently(
        20,
        (repositories) => repositories.idempotencyKeys.find('biz_a:test', key, now - TTL),
        (repositories, i) =>
          repositories.idempotencyKeys.claim(
            { scope: 'biz_a:test', key, createdAt: now },
            answer(i),
            now - TTL,
          ),
      );
      // Nobody saw a live row before claiming: only the claim decides.
      expect(reads).toEqual(Array(20).fill(undefined));
      expect(writes.filter(Boolean)).toHaveLength(1);
      expect(await keys.find('biz_a:test', key, now - TTL)).toStrictEqual(answer(writes.indexOf(true)));
    }
  });

  it('one transfer settled by two instances at once: both read "not yet", one commits, the other is refused', async () => {
    const transfer = {
      transferId: 'trf_race',
      accountNumber: '9900000501',
      sessionId: null,
      amount: 5_000,
      currency: 'NGN',
      bankOutcome: 'credited',
      result: 'unknown_account' as const,
      source: 'notification' as const,
      settledAt: T0,
    };
    const { reads, writes } = await concurrently(
      2,
      // What the notification processor checks first, inside its transaction.
      async (repositories) => ({
        notification: await repositories.bankNotifications.findResult('ntf_race'),
        transfer: await repositories.settledTransfers.findResult('trf_race'),
      }),
      async (repositories, i) => {
        try {
          await repositories.settledTransfers.insert({ ...transfer, settledAt: T0 + i });
          await repositories.bankNotifications.insert({ ...transfer, id: 'ntf_race', receivedAt: T0 + i });
          return 'committed';
        } catch (error) {
          return {
            refused: (error as { code?: string; constraint?: string }).code,
            on: (error as { constraint?: string }).constraint,
          };
        }
      },
    );
    expect(reads).toEqual(Array(2).fill({ notification: undefined, transfer: undefined }));
    // The loser's insert waited for the winner's commit, then failed on the primary key; its COMMIT rolled back.
    // unique_violation on the transfer's primary key: the loser never reached its notification insert.
    expect(writes).toHaveLength(2);
    expect(writes).toContain('committed');
    expect(writes).toContainEqual({ refused: '23505', on: 'settled_transfers_pkey' });
    const winner = writes.indexOf('committed');
    const rows = await scratch.pool.query(
      `SELECT (SELECT count(*)::int FROM settled_transfers WHERE transfer_id = 'trf_race') AS transfers,
              (SELECT count(*)::int FROM bank_notifications WHERE id = 'ntf_race') AS notifications,
              (SELECT settled_at FROM settled_transfers WHERE transfer_id = 'trf_race') AS settled_at`,
    );
    expect(rows.rows[0]).toEqual({ transfers: 1, notifications: 1, settled_at: String(T0 + winner) });
  });

  it('list reaches, for each filter, the index SQLite uses for it, and reads a page, not the table (EXPLAIN ANALYZE of the very statement list sends)', async () => {
    const plans = openPool(await scratch.postgres.createDatabase('list_plans'), { max: 2 });
    try {
      await preparePostgres(plans);
      // 40,000 sessions: biz_a's 20,000 first, then biz_b's 20,000, each owner's test and live interleaved in
      // runs of 7, 'mismatch' rare (1 in 200), no 'pending' left. biz_a holds half the table, all of it older
      // than biz_b's: a plan that walks the primary key backwards for biz_a would read all of biz_b first.
      await plans.query(
        `INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
           payer_email, client_secret_hash, created_at, updated_at, expires_at)
         SELECT 'ses_plan_' || i, CASE WHEN i <= 20000 THEN 'biz_a' ELSE 'biz_b' END,
                CASE WHEN (i / 7) % 2 = 0 THEN 'test' ELSE 'live' END, 'plan-' || i,
                CASE WHEN i % 200 = 0 THEN 'mismatch' WHEN i % 3 = 0 THEN 'expired' ELSE 'successful' END,
                1000 + i, 'NGN', 'Ada', 'ada@example.com', decode(md5(i::text), 'hex'), $1::bigint + i,
                $1::bigint + i, $1::bigint + i + 1800000
           FROM generate_series(1, 40000) AS i`,
        [T0],
      );
      await plans.query('ANALYZE sessions');
      const seqOf = async (id: string) =>
        Number((await plans.query('SELECT seq FROM sessions WHERE id = $1', [id])).rows[0].seq);
      const middle = await seqOf('ses_plan_10000');
      const tablePages = Number(
        (await plans.query("SELECT relpages FROM pg_class WHERE relname = 'sessions'")).rows[0].relpages,
      );
      const planOf = async (query: SessionListQuery) => {
        const { statement, params } = sessionListStatement(query);
        const { text, names } = statement.postgres;
        const values = names.map((name) => params[name]);
        const explained = await plans.query(
          `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${text}`,
          values,
        );
        const top = explained.rows[0]['QUERY PLAN'][0].Plan as Record<string, unknown>;
        const indexes = new Set<string>();
        const nodes = new Set<string>();
        const walk = (node: Record<string, unknown>) => {
          nodes.add(node['Node Type'] as string);
          if (node['Index Name']) indexes.add(node['Index Name'] as string);
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
        };
        walk(top);
        return {
          indexes: [...indexes],
          seqScan: nodes.has('Seq Scan'),
          blocks: Number(top['Shared Hit Blocks']) + Number(top['Shared Read Blocks']),
          rows: Number(top['Actual Rows']),
        };
      };
      const owner = { businessId: 'biz_a', environment: 'test', limit: 21 } as const;
      const cases: Array<[SessionListQuery, string, number]> = [
        [owner, 'sessions_by_owner', 21],
        [{ ...owner, beforeSeq: middle }, 'sessions_by_owner', 21],
        [{ ...owner, status: 'successful' }, 'sessions_by_owner_status', 21],
        [{ ...owner, status: 'successful', beforeSeq: middle }, 'sessions_by_owner_status', 21],
        [{ ...owner, status: 'mismatch' }, 'sessions_by_owner_status', 21],
        [{ ...owner, status: 'pending' }, 'sessions_by_owner_status', 0],
        [{ ...owner, reference: 'plan-4' }, 'sessions_business_id_environment_reference_key', 1],
        [
          { ...owner, reference: 'plan-4', status: 'expired' },
          'sessions_business_id_environment_reference_key',
          0,
        ],
      ];
      for (const [query, index, rows] of cases) {
        const plan = await planOf(query);
        expect({ query, ...plan, blocks: undefined }).toEqual({
          query,
          indexes: [index],
          seqScan: false,
          blocks: undefined,
          rows,
        });
        // A page of 21 touches a few dozen blocks at most, of a table of hundreds: never the table.
        expect(plan.blocks, JSON.stringify(query)).toBeLessThanOrEqual(64);
        expect(tablePages).toBeGreaterThan(5 * 64);
      }
      // And the pages they answer: newest first, the filter applied.
      const sessions = new SqlSessionRepository(new PostgresRunner(plans));
      const page = await sessions.list(owner);
      expect(page.map((s) => s.id)).toEqual(
        (
          await plans.query(
            `SELECT id FROM sessions WHERE business_id = 'biz_a' AND environment = 'test'
             ORDER BY seq DESC LIMIT 21`,
          )
        ).rows.map((row) => row.id),
      );
      const mismatches = await sessions.list({ ...owner, status: 'mismatch', beforeSeq: middle });
      expect(mismatches).toHaveLength(21);
      expect(mismatches.every((s) => s.status === 'mismatch' && s.businessId === 'biz_a')).toBe(true);
      expect(mismatches.every((s) => s.environment === 'test' && s.seq < middle)).toBe(true);
      expect(mismatches.map((s) => s.seq)).toEqual([...mismatches.map((s) => s.seq)].sort((x, y) => y - x));
    } finally {
      await plans.end();
    }
  });

  it('a stored integer no JavaScript number holds exactly is refused on read, never rounded', async () => {
    const sessions = new SqlSessionRepository(new PostgresRunner(scratch.pool));
    await sessions.insert(newSession('ses_past_2_53', { reference: 'past-2-53' }));
    // Written by hand: no repository call can write it (a number cannot hold 2^53 + 1).
    await scratch.pool.query("UPDATE sessions SET amount = 9007199254740993 WHERE id = 'ses_past_2_53'");
    await expect(sessions.find('ses_past_2_53')).rejects.toThrow(RangeError);
    // 2^53 + 2 is a number; it is kept, as any integer a number holds.
    await scratch.pool.query("UPDATE sessions SET amount = 9007199254740994 WHERE id = 'ses_past_2_53'");
    expect((await sessions.find('ses_past_2_53'))?.amount).toBe(2 ** 53 + 2);
  });
});
