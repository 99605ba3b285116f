import { describe, expect, it } from 'vitest';
import { mockedApi, ORIGIN, ok } from '../../test-support/fixtures.ts';
import type { PaymentLink } from '../protocol/index.ts';

const at = '2026-01-01T12:00:00.000Z';
const link = (overrides: Partial<PaymentLink> = {}): PaymentLink => ({
  id: 'pl_1',
  name: 'Ankara fabric',
  environment: 'test',
  amount: 500_000,
  currency: 'NGN',
  reusable: true,
  active: true,
  url: 'https://js.test.example/links/pl_1',
  successUrl: null,
  metadata: {},
  completedAt: null,
  createdAt: at,
  updatedAt: at,
  ...overrides,
});

const bodyOf = (options: { body?: unknown }) => JSON.parse(String(options.body)) as unknown;

describe('payment links (mocked transport)', () => {
  const api = mockedApi();

  it('creates a link with an Idempotency-Key and reads it back', async () => {
    let sent: unknown;
    let key: string | undefined;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/payment-links', method: 'POST' })
      .reply((options) => {
        sent = bodyOf(options);
        key = (options.headers as Record<string, string>)['idempotency-key'];
        return { statusCode: 201, data: ok(link({ reusable: false }), 201) };
      });
    const created = await api.client.paymentLinks.create(
      { name: 'Ankara fabric', amount: 500_000, currency: 'NGN', reusable: false },
      { idempotencyKey: 'invoice-77' },
    );
    expect(created).toMatchObject({ id: 'pl_1', reusable: false, url: 'https://js.test.example/links/pl_1' });
    expect(sent).toEqual({ name: 'Ankara fabric', amount: 500_000, currency: 'NGN', reusable: false });
    expect(key).toBe('invoice-77');
  });

  it('retrieves, deactivates, and walks every page of the list', async () => {
    const pool = api.agent.get(ORIGIN);
    pool.intercept({ path: '/api/payment-links/pl_1', method: 'GET' }).reply(200, ok(link()));
    let patch: unknown;
    pool.intercept({ path: '/api/payment-links/pl_1', method: 'PATCH' }).reply((options) => {
      patch = bodyOf(options);
      return { statusCode: 200, data: ok(link({ active: false })) };
    });
    pool
      .intercept({ path: '/api/payment-links', method: 'GET', query: { limit: '1' } })
      .reply(200, { ...ok([link()]), pagination: { hasMore: true, nextCursor: 'pl_1' } });
    pool
      .intercept({ path: '/api/payment-links', method: 'GET', query: { limit: '1', startingAfter: 'pl_1' } })
      .reply(200, { ...ok([link({ id: 'pl_0' })]), pagination: { hasMore: false, nextCursor: null } });
    expect((await api.client.paymentLinks.retrieve('pl_1')).active).toBe(true);
    expect((await api.client.paymentLinks.update('pl_1', { active: false })).active).toBe(false);
    expect(patch).toEqual({ active: false });
    const ids: string[] = [];
    for await (const item of api.client.paymentLinks.list({ limit: 1 })) ids.push(item.id);
    expect(ids).toEqual(['pl_1', 'pl_0']);
  });
});
