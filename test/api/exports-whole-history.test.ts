import {
  BalanceSchema,
  BalanceTransactionSchema,
  envelopeOf,
  listEnvelopeOf,
  SessionSchema,
} from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../reference-server/src/internal/clock.ts';
import { bootstrap, call, createSession } from '../support/api.ts';
import { csvRecords, LEDGER_CSV_HEADER, ledgerCsvRow } from '../support/csv-exports.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 37: both exports of a business's whole history (no range), on both stores (the postgres project runs
// this file against PostgreSQL). Over two years of a manual clock the business takes payments, refunds one in
// part, has a transfer of the wrong amount returned on arrival (two entries in one millisecond), and leaves
// sessions pending and cancelled; another business pays too. Exported in pages of 3 rows, every ledger entry
// and every session must come out once, in order, matching the API's list field by field, and the export's
// sums must be `GET /api/balance`.

const LedgerList = listEnvelopeOf(BalanceTransactionSchema);
const SessionList = listEnvelopeOf(SessionSchema);
const BalanceEnvelope = envelopeOf(BalanceSchema);

const START = Date.UTC(2027, 2, 1, 9, 30); // 2027-03-01T09:30:00Z
const clock = new ManualClock(START);
let server: RunningServer;
let key: string;
/** What the scenario moved, summed as it went (minor units). */
const moved = { collected: 0, refunded: 0, returned: 0, sessions: 0 };
/** When the first and the last money moved (the manual clock's time of those transfers). */
const movedAt = { first: 0, last: 0 };

const api = async (method: 'GET' | 'POST', path: string, token = key, json?: unknown) => {
  const answer = await call(server.baseUrl, method, path, { token, ...(json === undefined ? {} : { json }) });
  expect(answer.status, `${method} ${path}: ${answer.text}`).toBeLessThan(300);
  return answer.body;
};

/** A session of `amount`, its account opened, `days` after the previous step. */
async function openSession(days: number, amount: number, token = key) {
  clock.advance(days * 86_400_000 + 1234);
  const created = await createSession(server.baseUrl, token, { amount });
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  if (token === key) moved.sessions += 1;
  return { id: created.id, accountNumber: opened.virtualAccount.accountNumber };
}

async function transfer(token: string, accountNumber: string, amount: number) {
  return api('POST', '/api/test/transfers', token, { accountNumber, amount });
}

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 }, exportPageSize: 3 }, { clock });
  key = (await server.createBusiness({ name: 'History Shop' })).keys.test.secretKey;
  const otherKey = (await server.createBusiness({ name: 'Other Shop' })).keys.test.secretKey;
  for (const [days, amount] of [
    [0, 120_000],
    [40, 75_500],
    [200, 310_000],
    [365, 9_900],
  ] as const) {
    const session = await openSession(days, amount);
    await transfer(key, session.accountNumber, amount);
    moved.collected += amount;
    movedAt.first ||= clock.now();
  }
  // Another business's payment, between this one's: never in this one's export.
  const theirs = await openSession(3, 55_000, otherKey);
  await transfer(otherKey, theirs.accountNumber, 55_000);
  // A partial refund of the third payment.
  const sessions = SessionList.parse(await api('GET', '/api/widget/sessions?status=successful&limit=100'));
  const refunded = sessions.data.find((session) => session.amount === 310_000);
  clock.advance(86_400_000);
  await api('POST', `/api/widget/sessions/${refunded?.id}/refunds`, key, { amount: 100_000 });
  moved.refunded += 100_000;
  // A transfer of the wrong amount, returned on arrival: in and out in one millisecond.
  const mismatched = await openSession(30, 44_000);
  const returned = await transfer(key, mismatched.accountNumber, 44_001);
  expect(returned.data).toMatchObject({ outcome: 'returned' });
  moved.collected += 44_001;
  moved.returned += 44_001;
  movedAt.last = clock.now();
  // Sessions with no money: one left open, one cancelled.
  await openSession(100, 20_000);
  const cancelled = await openSession(1, 21_000);
  await api('POST', `/api/widget/sessions/${cancelled.id}/cancel`);
});

afterAll(() => server.close());

/** A whole export: status, file name and records (the header first), as a spreadsheet reads RFC 4180. */
async function exported(kind: 'balance-transactions' | 'sessions') {
  const response = await fetch(new URL(`/api/exports/${kind}`, server.baseUrl), {
    headers: { authorization: `Bearer ${key}` },
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-disposition')).toBe(
    `attachment; filename="servicepay-${kind}-test-start-to-now.csv"`,
  );
  const [header, ...rows] = csvRecords(text);
  return { header, rows };
}

/** Every entry of the ledger list, walked page by page newest first (pages of 4). */
async function wholeLedger() {
  const entries: Array<ReturnType<typeof LedgerList.parse>['data'][number]> = [];
  let query = '?limit=4';
  for (;;) {
    const page = LedgerList.parse(await api('GET', `/api/balance-transactions${query}`));
    entries.push(...page.data);
    if (!page.pagination.hasMore) return entries;
    query = `?limit=4&startingAfter=${page.pagination.nextCursor}`;
  }
}

describe('a whole-history export (no range)', () => {
  it('of the ledger holds every entry of the list once, oldest first, and sums to GET /api/balance', async () => {
    const { header, rows } = await exported('balance-transactions');
    expect(header).toEqual(LEDGER_CSV_HEADER);
    // Four payments, one refund, a transfer received and returned.
    const listed = await wholeLedger();
    expect(listed).toHaveLength(7);
    const asRows = [...listed].reverse().map(ledgerCsvRow);
    expect(rows).toEqual(asRows);
    expect(rows.map((row) => row[2])).toEqual([
      'payment',
      'payment',
      'payment',
      'payment',
      'refund',
      'transfer_received',
      'transfer_return',
    ]);
    // Spanning the history: from the first payment to the returned transfer 639 days later.
    expect([rows[0]?.[1], rows.at(-1)?.[1]]).toEqual([
      new Date(movedAt.first).toISOString(),
      new Date(movedAt.last).toISOString(),
    ]);
    expect(movedAt.last - movedAt.first).toBeGreaterThan(600 * 86_400_000);

    const amounts = rows.map((row) => ({ type: row[2], amount: Number(row[3]) }));
    const sum = (keep: (entry: { type: string | undefined; amount: number }) => boolean) =>
      amounts.filter(keep).reduce((total, entry) => total + entry.amount, 0);
    const fromExport = {
      currency: 'NGN',
      collected: sum((entry) => entry.amount > 0),
      refunded: -sum((entry) => entry.type === 'refund'),
      returned: -sum((entry) => entry.type === 'transfer_return' || entry.type === 'unapplied_credit_return'),
      net: sum(() => true),
    };
    const balance = BalanceEnvelope.parse(await api('GET', '/api/balance')).data;
    expect(balance.currencies).toEqual([fromExport]);
    expect(fromExport).toEqual({
      currency: 'NGN',
      collected: moved.collected,
      refunded: moved.refunded,
      returned: moved.returned,
      net: moved.collected - moved.refunded - moved.returned,
    });
  });

  it("of the sessions holds every session of the list once, oldest first; its paid and refunded amounts are the ledger's", async () => {
    const { header, rows } = await exported('sessions');
    const listed = SessionList.parse(await api('GET', '/api/widget/sessions?limit=100'));
    expect(listed.pagination.hasMore).toBe(false);
    expect(listed.data).toHaveLength(moved.sessions);
    const column = (name: string) => header?.indexOf(name) ?? -1;
    const [id, status, amount, refunded, paidAt] = ['id', 'status', 'amount', 'amountRefunded', 'paidAt'].map(
      column,
    ) as [number, number, number, number, number];
    expect(
      rows.map((row) => [row[id], row[status], Number(row[amount]), Number(row[refunded]), row[paidAt]]),
    ).toEqual(
      [...listed.data]
        .reverse()
        .map((session) => [
          session.id,
          session.status,
          session.amount,
          session.amountRefunded,
          session.paidAt ?? '',
        ]),
    );
    expect(rows.map((row) => row[status])).toEqual([
      'successful',
      'successful',
      'successful',
      'successful',
      'mismatch',
      'awaiting_payment',
      'cancelled',
    ]);
    // What the successful sessions took, less what was refunded of them, is the ledger's net: the returned
    // transfer went in and out.
    const paid = rows.filter((row) => row[status] === 'successful');
    const taken = paid.reduce((total, row) => total + Number(row[amount]) - Number(row[refunded]), 0);
    const [ngn] = BalanceEnvelope.parse(await api('GET', '/api/balance')).data.currencies;
    expect(taken).toBe(ngn?.net);
  });
});
