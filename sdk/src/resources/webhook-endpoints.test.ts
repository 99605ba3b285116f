import { describe, expect, it } from 'vitest';
import { endpoint, LIVE_KEY, mockedApi, ORIGIN, ok } from '../../test-support/fixtures.ts';
import { ServicePay } from '../client.ts';
import { PermissionError } from '../errors.ts';
import type { WebhookDelivery } from '../protocol/index.ts';

const delivery = (id: string): WebhookDelivery => ({
  id,
  endpointId: 'we_1',
  eventId: 'evt_1',
  eventType: 'session.successful',
  status: 'failed',
  attemptCount: 1,
  nextAttemptAt: null,
  attempts: [
    { at: '2025-01-01T12:00:00.000Z', statusCode: 500, latencyMs: 12, error: null, responseExcerpt: 'oops' },
  ],
  createdAt: '2025-01-01T12:00:00.000Z',
});

const bodyOf = (options: { body?: unknown }) => JSON.parse(String(options.body)) as unknown;

describe('webhook endpoints, events and test helpers (mocked transport)', () => {
  const api = mockedApi();

  it('creates an endpoint and returns its secret', async () => {
    let sent: unknown;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/webhooks', method: 'POST' })
      .reply((options) => {
        sent = bodyOf(options);
        return { statusCode: 201, data: ok({ ...endpoint(), secret: 'whsec_abc' }, 201) };
      });
    const created = await api.client.webhookEndpoints.create({
      url: 'https://shop.example.com/hooks',
      events: ['session.successful'],
    });
    expect(created).toMatchObject({ id: 'we_1', secret: 'whsec_abc' });
    expect(sent).toEqual({ url: 'https://shop.example.com/hooks', events: ['session.successful'] });
  });

  it('lists by environment', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/webhooks', method: 'GET', query: { environment: 'test' } })
      .reply(200, { ...ok([endpoint()]), pagination: { hasMore: false, nextCursor: null } });
    const page = await api.client.webhookEndpoints.list({ environment: 'test' });
    expect(page.data.map((e) => e.id)).toEqual(['we_1']);
  });

  it('retrieves, updates and deletes', async () => {
    const pool = api.agent.get(ORIGIN);
    pool.intercept({ path: '/api/webhooks/we_1', method: 'GET' }).reply(200, ok(endpoint()));
    let patch: unknown;
    pool.intercept({ path: '/api/webhooks/we_1', method: 'PATCH' }).reply((options) => {
      patch = bodyOf(options);
      return { statusCode: 200, data: ok(endpoint({ enabled: false })) };
    });
    pool
      .intercept({ path: '/api/webhooks/we_1', method: 'DELETE' })
      .reply(200, ok({ id: 'we_1', deleted: true }), { headers: { 'request-id': 'req_del' } });
    await expect(api.client.webhookEndpoints.retrieve('we_1')).resolves.toMatchObject({ enabled: true });
    await expect(api.client.webhookEndpoints.update('we_1', { enabled: false })).resolves.toMatchObject({
      enabled: false,
    });
    expect(patch).toEqual({ enabled: false });
    const { data, response } = await api.client.webhookEndpoints.delete('we_1').withResponse();
    expect(data).toEqual({ id: 'we_1', deleted: true });
    expect(response.requestId).toBe('req_del');
  });

  it.each([
    ['an empty 204', 204, ''],
    ['deleted: false', 200, ok({ id: 'we_1', deleted: false })],
    ['no id', 200, ok({ deleted: true })],
  ])(
    'refuses a delete answer that is not the contract’s (%s) instead of inventing one',
    async (_l, status, body) => {
      api.agent.get(ORIGIN).intercept({ path: '/api/webhooks/we_1', method: 'DELETE' }).reply(status, body);
      const error = await api.client.webhookEndpoints.delete('we_1').catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'APIError', code: 'invalid_response', statusCode: status });
    },
  );

  it('rolls the secret', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/webhooks/we_1/roll-secret', method: 'POST' })
      .reply(200, ok({ ...endpoint(), secret: 'whsec_new' }));
    await expect(api.client.webhookEndpoints.rollSecret('we_1')).resolves.toMatchObject({
      secret: 'whsec_new',
    });
  });

  it('lists deliveries across pages with their filters', async () => {
    const pool = api.agent.get(ORIGIN);
    pool
      .intercept({
        path: '/api/webhooks/we_1/deliveries',
        method: 'GET',
        query: { status: 'failed', eventId: 'evt_1' },
      })
      .reply(200, { ...ok([delivery('wd_2')]), pagination: { hasMore: true, nextCursor: 'wd_2' } });
    pool
      .intercept({
        path: '/api/webhooks/we_1/deliveries',
        method: 'GET',
        query: { status: 'failed', eventId: 'evt_1', startingAfter: 'wd_2' },
      })
      .reply(200, { ...ok([delivery('wd_1')]), pagination: { hasMore: false, nextCursor: null } });
    const ids: string[] = [];
    for await (const item of api.client.webhookEndpoints.deliveries('we_1', {
      status: 'failed',
      eventId: 'evt_1',
    })) {
      ids.push(item.id);
    }
    expect(ids).toEqual(['wd_2', 'wd_1']);
  });

  it('resends an event to one endpoint', async () => {
    let sent: unknown;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/events/evt_1/resend', method: 'POST' })
      .reply((options) => {
        sent = bodyOf(options);
        return {
          statusCode: 202,
          data: {
            meta: { statusCode: 202, message: 'Accepted' },
            data: { eventId: 'evt_1', deliveries: ['wd_1'] },
          },
        };
      });
    await expect(api.client.events.resend('evt_1', { endpointId: 'we_1' })).resolves.toEqual({
      eventId: 'evt_1',
      deliveries: ['wd_1'],
    });
    expect(sent).toEqual({ endpointId: 'we_1' });
  });

  it('simulates a transfer with a test key', async () => {
    let sent: unknown;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/test/transfers', method: 'POST' })
      .reply((options) => {
        sent = bodyOf(options);
        return {
          statusCode: 201,
          data: ok({
            id: 'trf_1',
            accountNumber: '0123456789',
            amount: 500_000,
            currency: 'NGN',
            outcome: 'credited',
            returnReason: null,
            notification: 'delivered',
            createdAt: '2025-01-01T12:00:00.000Z',
          }),
        };
      });
    const transfer = await api.client.testHelpers.simulateTransfer({
      accountNumber: '0123456789',
      amount: 500_000,
    });
    expect(transfer).toMatchObject({ outcome: 'credited', notification: 'delivered' });
    expect(sent).toEqual({ accountNumber: '0123456789', amount: 500_000 });
  });

  it('refuses to simulate a transfer with a live key, sending nothing', async () => {
    const live = new ServicePay(LIVE_KEY, { baseUrl: ORIGIN, dispatcher: api.agent });
    const error = await live.testHelpers
      .simulateTransfer({ accountNumber: '0123456789', amount: 500_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ code: 'test_mode_only', statusCode: null });
  });
});
