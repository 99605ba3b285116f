import { BalanceTransactionSchema, listEnvelopeOf } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { ManualClock, silentLogger } from '../../reference-server/src/index.ts';
import {
  bankNotification,
  bootstrap,
  call,
  createSession,
  expectError,
  postNotification,
  retrieveSession,
} from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 37's ledger at the API's edge, on both stores: bad queries answered 400 in the envelope (never a 5xx),
// the key kinds and environments refused, and the ledger written once per movement, whatever the number of
// notifications, and never for money the bank does not hold.

const ListEnvelope = listEnvelopeOf(BalanceTransactionSchema);

let server: RunningServer;
let clock: ManualClock;
let key: string;
let publishableKey: string;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-06-01T09:00:00Z'));
  server = await startServer({ rateLimit: { perMinute: 10_000 } }, { clock });
  const shop = await server.createBusiness({ name: 'Edge Shop' });
  key = shop.keys.test.secretKey;
  publishableKey = shop.keys.test.publishableKey;
});

afterAll(async () => {
  await server.close();
});

const list = (query = '', token = key) =>
  call(server.baseUrl, 'GET', `/api/balance-transactions${query}`, { token });
const entriesOf = async (sessionId: string) => {
  const answer = await list(`?sessionId=${sessionId}&limit=100`);
  expect(answer.status, answer.text).toBe(200);
  return ListEnvelope.parse(answer.body).data;
};
const sign = (notification: unknown) => postNotification(server, notification, { nowMs: clock.now() });

async function openSession(amount: number) {
  const created = await createSession(server.baseUrl, key, { amount });
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  return { id: created.id, accountNumber: opened.virtualAccount.accountNumber };
}

/** The same bank over the same books, whose notifications cannot reach the service yet. */
const unreachableBank = () =>
  new SimulatedBank({
    books: server.bankBooks,
    clock,
    logger: silentLogger,
    secret: server.service.config.bank.secret,
    bankName: 'ServicePay Test Bank',
    notificationUrl: () => undefined,
  });

describe('balance transactions: what a client sends wrong', () => {
  it.each([
    ['?type=fee', 'type'],
    ['?createdFrom=yesterday', 'createdFrom'],
    ['?createdTo=2030-13-01T00:00:00Z', 'createdTo'],
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?sessionId=', 'sessionId'],
    ['?createdFrom=2030-06-02T00:00:00.000Z&createdTo=2030-06-01T00:00:00.000Z', 'createdTo'],
    ['?startingAfter=txn_nobody', 'startingAfter'],
  ])('%s is 400 validation_failed on %s', async (query, path) => {
    const body = expectError(await list(query), 400, 'validation_failed');
    expect(body.errors?.map((error) => error.path)).toContain(path);
  });

  it('a publishable key, no key, or the other environment is refused before anything is read', async () => {
    expectError(await list('', publishableKey), 403, 'publishable_key_not_allowed');
    expectError(await call(server.baseUrl, 'GET', '/api/balance'), 401, 'authentication_required');
    expectError(await list('?environment=live'), 403, 'environment_mismatch');
    expectError(await list('?environment=staging'), 400, 'validation_failed');
    expectError(
      await call(server.baseUrl, 'GET', '/api/balance?environment=live', { token: key }),
      403,
      'environment_mismatch',
    );
  });
});

describe('balance transactions: once per movement', () => {
  it('a payment notified again, under its own notification id and under new ones, is one entry', async () => {
    const { id, accountNumber } = await openSession(11_000);
    const notice = bankNotification(accountNumber, 11_000, { payerAccount: '1234567890' });
    expect((await sign(notice)).body.data).toMatchObject({ result: 'credited', duplicate: false });
    await Promise.all(
      Array.from({ length: 5 }, () => sign({ ...notice, id: bankNotification(accountNumber, 1).id })),
    );
    expect((await sign(notice)).body.data).toMatchObject({ duplicate: true });
    const entries = await entriesOf(id);
    expect(entries.map((entry) => [entry.type, entry.amount, entry.transferId, entry.payerAccount])).toEqual([
      ['payment', 11_000, notice.transfer.id, '******7890'],
    ]);
  });

  it('a credit heard of only as the cancel closes the account is one payment; its late notification adds none', async () => {
    const { id, accountNumber } = await openSession(12_000);
    const transfer = await unreachableBank().transfer(accountNumber, 12_000, '2222233333');
    const cancel = await call(server.baseUrl, 'POST', `/api/widget/sessions/${id}/cancel`, { token: key });
    expect(cancel.status).toBe(409);
    expect((await retrieveSession(server.baseUrl, key, id)).status).toBe('successful');
    // The bank's outbox, retried once its lease ran out: the notification arrives, and is a duplicate.
    clock.advance(120_000);
    await server.service.deps.bank.retryDue();
    const [delivered] = await server.bankRows<{ delivered: number }>(
      'SELECT count(*) AS delivered FROM bank_outbox WHERE transfer_id = ? AND delivered_at IS NOT NULL',
      transfer.id,
    );
    expect(Number(delivered?.delivered)).toBe(1);
    const entries = await entriesOf(id);
    expect(entries.map((entry) => [entry.type, entry.amount, entry.transferId, entry.payerAccount])).toEqual([
      ['payment', 12_000, transfer.id, '******3333'],
    ]);
  });

  it('a credit the bank never made (a signed, mistaken notification) makes no entry', async () => {
    const { id, accountNumber } = await openSession(13_000);
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${id}/cancel`, { token: key });
    const forged = bankNotification(accountNumber, 13_000);
    expect((await sign(forged)).body.data.result).toBe('unapplied');
    const [credit] = await server.rows<{ refund_status: string }>(
      'SELECT refund_status FROM unapplied_credits WHERE transfer_id = ?',
      forged.transfer.id,
    );
    expect(credit?.refund_status).toBe('refund_refused');
    expect(await entriesOf(id)).toEqual([]);
  });

  it('a transfer returned on arrival is received and returned at once; the balance nets it out', async () => {
    const { id, accountNumber } = await openSession(14_000);
    const before = await call(server.baseUrl, 'GET', '/api/balance', { token: key });
    const transfer = await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: key,
      json: { accountNumber, amount: 14_001, payerAccount: '9999988888' },
    });
    expect(transfer.body.data).toMatchObject({ outcome: 'returned', returnReason: 'amount_mismatch' });
    const entries = await entriesOf(id);
    expect(entries.map((entry) => [entry.type, entry.amount, entry.payerAccount])).toEqual([
      ['transfer_return', -14_001, '******8888'],
      ['transfer_received', 14_001, '******8888'],
    ]);
    expect(entries[0]?.createdAt).toBe(entries[1]?.createdAt);
    const after = await call(server.baseUrl, 'GET', '/api/balance', { token: key });
    const [was, is] = [before.body.data.currencies[0], after.body.data.currencies[0]];
    expect({
      collected: is.collected - was.collected,
      returned: is.returned - was.returned,
      net: is.net - was.net,
    }).toEqual({ collected: 14_001, returned: 14_001, net: 0 });
  });
});

describe('balance transactions: cursor pages', () => {
  it('walks pages newest first, each entry once, across a millisecond many entries share; a cursor not of this list is 400', async () => {
    const pager = await server.createBusiness({ name: 'Pager Shop' });
    const pagerKey = pager.keys.test.secretKey;
    const ledger = server.service.deps.store.balanceTransactions;
    // Known rows, as the ledger's writer records them: seven in one millisecond, two either side, written out of
    // time order; one of the same business in live, and one of another business.
    const at = Date.parse('2030-06-01T10:00:00Z');
    const times = [at + 5, at, at, at, at - 7, at, at, at, at + 9, at];
    const other = await server.createBusiness({ name: 'Other Pager Shop' });
    for (const [n, createdAt] of [...times.entries(), [10, at] as const, [11, at] as const]) {
      await ledger.insert({
        id: `txn_pager${n}`,
        businessId: n === 11 ? other.business.id : pager.business.id,
        environment: n === 10 ? 'live' : 'test',
        type: 'payment',
        amount: 1000 + n,
        currency: 'NGN',
        sessionId: null,
        refundId: null,
        transferId: `trf_pager${n}`,
        payerAccount: '******0001',
        createdAt,
      });
    }
    const page = async (query: string, token = pagerKey) => {
      const answer = await list(query, token);
      expect(answer.status, answer.text).toBe(200);
      return ListEnvelope.parse(answer.body);
    };
    const whole = (await page('?limit=100')).data;
    // Newest first by time, then the later written first.
    expect(whole.map((entry) => entry.id)).toEqual(
      [8, 0, 9, 7, 6, 5, 3, 2, 1, 4].map((n) => `txn_pager${n}`),
    );
    for (const limit of [1, 2, 3, 4]) {
      const walked: string[] = [];
      let query = `?limit=${limit}`;
      for (;;) {
        const { data, pagination } = await page(query);
        walked.push(...data.map((entry) => entry.id));
        if (!pagination.hasMore) break;
        expect(pagination.nextCursor).toBe(data.at(-1)?.id);
        query = `?limit=${limit}&startingAfter=${pagination.nextCursor}`;
      }
      expect(walked, `pages of ${limit}`).toEqual(whole.map((entry) => entry.id));
    }
    // Another business's entry, and this business's live one, are no cursor of this list: 400, nothing read.
    for (const cursor of ['txn_pager11', 'txn_pager10']) {
      const body = expectError(await list(`?startingAfter=${cursor}`, pagerKey), 400, 'validation_failed');
      expect(body.errors?.map((error) => error.path)).toEqual(['startingAfter']);
    }
  });
});
