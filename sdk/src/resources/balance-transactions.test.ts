import { describe, expect, it } from 'vitest';
import { fail, mockedApi, ORIGIN, ok } from '../../test-support/fixtures.ts';
import { PermissionError } from '../errors.ts';
import type { BalanceTransaction } from '../protocol/index.ts';

const entry = (id: string, overrides: Partial<BalanceTransaction> = {}): BalanceTransaction => ({
  id,
  type: 'payment',
  environment: 'test',
  amount: 500_000,
  currency: 'NGN',
  sessionId: 'ses_1',
  refundId: null,
  transferId: 'trf_1',
  payerAccount: '******0001',
  createdAt: '2026-12-05T10:00:00.000Z',
  ...overrides,
});

const page = (ids: string[], nextCursor: string | null) => ({
  ...ok(ids.map((id) => entry(id))),
  pagination: { hasMore: nextCursor !== null, nextCursor },
});

describe('balance transactions and balance (mocked transport)', () => {
  const api = mockedApi();

  it('lists with its filters in the query, Dates sent as ISO 8601', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({
        path: '/api/balance-transactions',
        method: 'GET',
        query: {
          type: 'refund',
          sessionId: 'ses_9',
          createdFrom: '2026-12-05T00:00:00.000Z',
          createdTo: '2026-12-06T00:00:00.000Z',
          limit: '5',
        },
      })
      .reply(200, page(['txn_2'], null));
    const listed = await api.client.balanceTransactions.list({
      type: 'refund',
      sessionId: 'ses_9',
      createdFrom: new Date('2026-12-05T00:00:00Z'),
      createdTo: '2026-12-06T00:00:00.000Z',
      limit: 5,
    });
    expect(listed.data.map((item) => [item.id, item.amount, item.payerAccount])).toEqual([
      ['txn_2', 500_000, '******0001'],
    ]);
    expect(listed.hasMore).toBe(false);
  });

  it('walks every page with for await, each next page after the last cursor, filters kept', async () => {
    const pool = api.agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/balance-transactions', method: 'GET', query: { type: 'payment', limit: '2' } })
      .reply(200, page(['txn_4', 'txn_3'], 'txn_3'));
    pool
      .intercept({
        path: '/api/balance-transactions',
        method: 'GET',
        query: { type: 'payment', limit: '2', startingAfter: 'txn_3' },
      })
      .reply(200, page(['txn_2', 'txn_1'], null));
    const ids: string[] = [];
    for await (const item of api.client.balanceTransactions.list({ type: 'payment', limit: 2 }))
      ids.push(item.id);
    expect(ids).toEqual(['txn_4', 'txn_3', 'txn_2', 'txn_1']);
  });

  it('passes an entry type it does not know through as the string it is', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/balance-transactions/txn_7', method: 'GET' })
      .reply(200, ok(entry('txn_7', { type: 'fee' as never, amount: -150 })));
    const retrieved = await api.client.balanceTransactions.retrieve('txn_7');
    expect(String(retrieved.type)).toBe('fee');
    expect(retrieved.amount).toBe(-150);
  });

  it("maps another business's entry to a PermissionError with its code", async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/balance-transactions/txn_other', method: 'GET' })
      .reply(403, fail(403, 'forbidden'));
    const refused = api.client.balanceTransactions.retrieve('txn_other');
    await expect(refused).rejects.toBeInstanceOf(PermissionError);
    await expect(refused).rejects.toMatchObject({ statusCode: 403, code: 'forbidden' });
  });

  it('retrieves the balance per currency, with ?environment= when asked', async () => {
    const balance = {
      environment: 'test',
      currencies: [
        { currency: 'NGN', collected: 900_000, refunded: 100_000, returned: 300_000, net: 500_000 },
      ],
    };
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/balance', method: 'GET', query: { environment: 'test' } })
      .reply(200, ok(balance));
    expect(await api.client.balance.retrieve({ environment: 'test' })).toEqual(balance);
  });
});
