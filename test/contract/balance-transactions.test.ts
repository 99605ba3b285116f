import {
  type BalanceTransaction,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  ServicePay,
} from '@servicepay/node';
import { CLOSED_TEST_PAYER_ACCOUNT, type CreatedBusiness } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../support/server.ts';
import { contractFetch } from './contract-fetch.ts';

// Issue 37: the SDK's balanceTransactions and balance against the real reference server, every answer held to
// the contract's schemas (contract-fetch.ts). A payment, a partial refund, a refund the payer's bank refuses and
// a wrong amount make the entries the contract promises: each once, with the bank's transfer id and the payer's
// masked account, and the balance sums them.
const contract = contractFetch();
const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

describe('SDK balance transactions and balance against the reference server', () => {
  let server: RunningServer;
  let shop: CreatedBusiness;
  let other: CreatedBusiness;
  let servicepay: ServicePay;
  const story = {
    paidSession: '',
    paidTransfer: '',
    refundedId: '',
    closedPayerSession: '',
    wrongAmountSession: '',
    wrongAmountTransfer: '',
  };

  beforeAll(async () => {
    server = await startServer();
    shop = await server.createBusiness({ name: 'Ledger Shop' });
    other = await server.createBusiness({ name: 'Other Shop' });
    servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl, fetch: contract.fetch });

    // Paid from 0123456789, then refunded 60,000 of 250,000.
    const paid = await servicepay.sessions.create({ amount: 250_000, currency: 'NGN', payer });
    const { virtualAccount } = await servicepay.testHelpers.openAccount(paid.id);
    const transfer = await servicepay.testHelpers.simulateTransfer({
      accountNumber: virtualAccount.accountNumber,
      amount: 250_000,
      payerAccount: '0123456789',
    });
    expect(transfer).toMatchObject({ outcome: 'credited', notification: 'delivered' });
    const refund = await servicepay.refunds.create(paid.id, { amount: 60_000 });
    expect(refund.status).toBe('succeeded');
    Object.assign(story, { paidSession: paid.id, paidTransfer: transfer.id, refundedId: refund.id });

    // Paid from an account the payer's bank has closed: its refund is refused, nothing moves back.
    const closedPayer = await servicepay.sessions.create({ amount: 40_000, currency: 'NGN', payer });
    const opened = await servicepay.testHelpers.openAccount(closedPayer.id);
    await servicepay.testHelpers.simulateTransfer({
      accountNumber: opened.virtualAccount.accountNumber,
      amount: 40_000,
      payerAccount: CLOSED_TEST_PAYER_ACCOUNT,
    });
    expect((await servicepay.refunds.create(closedPayer.id)).status).toBe('failed');
    story.closedPayerSession = closedPayer.id;

    // The wrong amount: the bank returns it as it arrives.
    const wrong = await servicepay.sessions.create({ amount: 90_000, currency: 'NGN', payer });
    const wrongAccount = await servicepay.testHelpers.openAccount(wrong.id);
    const returned = await servicepay.testHelpers.simulateTransfer({
      accountNumber: wrongAccount.virtualAccount.accountNumber,
      amount: 89_000,
      payerAccount: '5550001111',
    });
    expect(returned).toMatchObject({ outcome: 'returned', returnReason: 'amount_mismatch' });
    Object.assign(story, { wrongAmountSession: wrong.id, wrongAmountTransfer: returned.id });
  });

  afterAll(async () => {
    await servicepay?.close();
    await server?.close();
  });

  const summary = (entry: BalanceTransaction) => [
    entry.type,
    entry.amount,
    entry.sessionId,
    entry.transferId,
    entry.payerAccount,
  ];

  it('lists each movement once, newest first, walking pages with for await', async () => {
    const walked: BalanceTransaction[] = [];
    for await (const entry of servicepay.balanceTransactions.list({ limit: 2 })) walked.push(entry);
    expect(walked.map(summary)).toEqual([
      ['transfer_return', -89_000, story.wrongAmountSession, story.wrongAmountTransfer, '******1111'],
      ['transfer_received', 89_000, story.wrongAmountSession, story.wrongAmountTransfer, '******1111'],
      ['payment', 40_000, story.closedPayerSession, expect.stringMatching(/^trf_/), '******0404'],
      ['refund', -60_000, story.paidSession, story.paidTransfer, '******6789'],
      ['payment', 250_000, story.paidSession, story.paidTransfer, '******6789'],
    ]);
    expect(new Set(walked.map((entry) => entry.id)).size).toBe(5);
    expect(walked.every((entry) => /^txn_/.test(entry.id) && entry.environment === 'test')).toBe(true);
    expect(walked.find((entry) => entry.type === 'refund')?.refundId).toBe(story.refundedId);
    // The page size was honoured: five entries in three pages.
    const first = await servicepay.balanceTransactions.list({ limit: 2 });
    expect([first.data.length, first.hasMore]).toEqual([2, true]);
  });

  it('filters by type, session and a time range', async () => {
    const payments = await servicepay.balanceTransactions.list({ type: 'payment' });
    expect(payments.data.map((entry) => entry.amount)).toEqual([40_000, 250_000]);
    const ofSession = await servicepay.balanceTransactions.list({ sessionId: story.paidSession });
    expect(ofSession.data.map((entry) => entry.type)).toEqual(['refund', 'payment']);
    const all = await servicepay.balanceTransactions.list({ limit: 100 });
    const oldest = all.data.at(-1) as BalanceTransaction;
    const fromOldest = await servicepay.balanceTransactions.list({
      createdFrom: oldest.createdAt,
      createdTo: new Date(Date.now() + 60_000),
      limit: 100,
    });
    expect(fromOldest.data).toHaveLength(5);
    const beforeOldest = await servicepay.balanceTransactions.list({ createdTo: oldest.createdAt });
    expect(beforeOldest.data).toEqual([]);
    const backwards = servicepay.balanceTransactions.list({
      createdFrom: '2026-12-02T00:00:00.000Z',
      createdTo: '2026-12-01T00:00:00.000Z',
    });
    await expect(backwards).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(backwards).rejects.toMatchObject({ statusCode: 400, code: 'validation_failed' });
  });

  it("retrieves an entry; another business's key gets 403, an unknown id 404", async () => {
    const [newest] = (await servicepay.balanceTransactions.list({ limit: 1 })).data;
    const entry = newest as BalanceTransaction;
    expect(await servicepay.balanceTransactions.retrieve(entry.id)).toEqual(entry);

    const stranger = new ServicePay(other.keys.test.secretKey, {
      baseUrl: server.baseUrl,
      fetch: contract.fetch,
    });
    const refused = stranger.balanceTransactions.retrieve(entry.id);
    await expect(refused).rejects.toBeInstanceOf(PermissionError);
    await expect(refused).rejects.toMatchObject({ statusCode: 403, code: 'forbidden' });
    expect((await stranger.balanceTransactions.list()).data).toEqual([]);
    await expect(stranger.balanceTransactions.list({ startingAfter: entry.id })).rejects.toMatchObject({
      statusCode: 400,
      code: 'validation_failed',
    });
    await expect(servicepay.balanceTransactions.retrieve('txn_unknown')).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await stranger.close();
  });

  it('the balance sums the ledger per currency; ?environment= of the other environment is 403', async () => {
    const balance = await servicepay.balance.retrieve();
    expect(balance).toEqual({
      environment: 'test',
      currencies: [
        {
          currency: 'NGN',
          collected: 250_000 + 40_000 + 89_000,
          refunded: 60_000,
          returned: 89_000,
          net: 250_000 + 40_000 - 60_000,
        },
      ],
    });
    await expect(servicepay.balance.retrieve({ environment: 'live' })).rejects.toMatchObject({
      statusCode: 403,
      code: 'environment_mismatch',
    });
    await expect(servicepay.balanceTransactions.list({ environment: 'live' })).rejects.toMatchObject({
      statusCode: 403,
      code: 'environment_mismatch',
    });
  });
});
