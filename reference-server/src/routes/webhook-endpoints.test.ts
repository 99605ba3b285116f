import { WebhookEventSchema } from '@servicepay/node/protocol';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { call } from '../../../test/support/api.ts';
import { independentlyVerify, startReceiver } from '../../../test/support/checkout.ts';
import { type RunningServer, startServer } from '../../../test/support/server.ts';

let server: RunningServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let sk: string;
let otherSk: string;

beforeEach(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  receiver = await startReceiver();
  sk = (await server.createBusiness({ name: 'Shop' })).keys.test.secretKey;
  otherSk = (await server.createBusiness({ name: 'Other' })).keys.test.secretKey;
});

afterEach(async () => {
  await server.close();
  await receiver.close();
});

const request = (key: string, method: string, path: string, body?: unknown) =>
  call(server.baseUrl, method, path, { token: key, json: body });

async function cancelledSession(key = sk): Promise<string> {
  const created = await request(key, 'POST', '/api/widget/sessions', {
    amount: 10_000,
    currency: 'NGN',
    payer: { name: 'Ada', email: 'ada@example.com' },
  });
  const cancelled = await request(key, 'POST', `/api/widget/sessions/${created.body.data.id}/cancel`);
  expect(cancelled.body.data.status).toBe('cancelled');
  return created.body.data.id as string;
}

describe('endpoints resource', () => {
  test('create returns the secret once; retrieve, list, update, delete', async () => {
    const created = await request(sk, 'POST', '/api/webhooks', { url: receiver.url, description: 'orders' });
    expect(created.status).toBe(201);
    const endpoint = created.body.data;
    expect(endpoint.id).toMatch(/^we_[0-9A-Za-z]{24}$/);
    expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(endpoint.events).toEqual([
      'session.successful',
      'session.mismatch',
      'session.expired',
      'session.cancelled',
      'session.credit_unapplied',
      'refund.succeeded',
      'refund.failed',
    ]);
    expect(endpoint).toMatchObject({ enabled: true, disabledReason: null, environment: 'test' });

    const fetched = await request(sk, 'GET', `/api/webhooks/${endpoint.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data.secret).toBeUndefined();
    expect(fetched.body.data.url).toBe(receiver.url);

    const second = await request(sk, 'POST', '/api/webhooks', {
      url: receiver.url,
      events: ['session.successful'],
    });
    const page1 = await request(sk, 'GET', '/api/webhooks?environment=test&limit=1');
    expect(page1.body.data.map((e: { id: string }) => e.id)).toEqual([second.body.data.id]);
    expect(page1.body.pagination).toEqual({ hasMore: true, nextCursor: second.body.data.id });
    const page2 = await request(sk, 'GET', `/api/webhooks?limit=1&startingAfter=${second.body.data.id}`);
    expect(page2.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect(page2.body.pagination).toEqual({ hasMore: false, nextCursor: null });
    const live = await request(sk, 'GET', '/api/webhooks?environment=live');
    expect(live.status).toBe(403);
    expect(live.body.meta.code).toBe('environment_mismatch');

    const patched = await request(sk, 'PATCH', `/api/webhooks/${endpoint.id}`, {
      events: ['session.cancelled'],
      enabled: false,
    });
    expect(patched.body.data).toMatchObject({
      events: ['session.cancelled'],
      enabled: false,
      disabledReason: null,
    });

    const deleted = await request(sk, 'DELETE', `/api/webhooks/${endpoint.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: endpoint.id, deleted: true });
    expect((await request(sk, 'GET', `/api/webhooks/${endpoint.id}`)).status).toBe(404);
  });

  test('another business gets 403 on every route; an unknown id 404', async () => {
    const { body } = await request(sk, 'POST', '/api/webhooks', { url: receiver.url });
    const id = body.data.id as string;
    for (const [method, path, payload] of [
      ['GET', `/api/webhooks/${id}`],
      ['PATCH', `/api/webhooks/${id}`, { enabled: false }],
      ['DELETE', `/api/webhooks/${id}`],
      ['POST', `/api/webhooks/${id}/roll-secret`],
      ['GET', `/api/webhooks/${id}/deliveries`],
    ] as const) {
      const response = await request(otherSk, method, path, payload);
      expect([method, path, response.status, response.body.meta.code]).toEqual([
        method,
        path,
        403,
        'forbidden',
      ]);
    }
    const unknown = await request(sk, 'GET', '/api/webhooks/we_000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.meta.code).toBe('not_found');
    const unknownEvent = await request(sk, 'POST', '/api/events/evt_000000000000000000000000/resend', {});
    expect(unknownEvent.status).toBe(404);
  });

  test('validation errors name the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: receiver.url, events: ['session.pending'] }, 'events.0'],
      [{ url: receiver.url, secret: 'x' }, 'secret'],
      [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url'],
      [{ url: 'http://10.1.2.3/hooks' }, 'url'],
      [{ url: 'http://user:pw@127.0.0.1/hooks' }, 'url'],
    ];
    for (const [body, path] of cases) {
      const response = await request(sk, 'POST', '/api/webhooks', body);
      expect(response.status).toBe(400);
      expect(response.body.meta.code).toBe('validation_failed');
      expect(response.body.errors.map((error: { path: string }) => error.path)).toContain(path);
    }
  });

  test('live endpoints need https and a public address', async () => {
    const live = (await server.createBusiness({ kycApproved: true })).keys.live.secretKey;
    for (const url of [
      'http://93.184.215.14/hooks',
      'https://127.0.0.1/hooks',
      'https://[::1]/hooks',
      'https://[::ffff:7f00:1]/hooks',
      'https://169.254.169.254/hooks',
      'https://192.168.0.10/hooks',
      'https://100.64.1.1/hooks',
      'https://[fd00::1]/hooks',
      'https://localhost/hooks',
    ]) {
      const response = await request(live, 'POST', '/api/webhooks', { url });
      expect([url, response.status, response.body.meta.code]).toEqual([url, 400, 'validation_failed']);
    }
    const ok = await request(live, 'POST', '/api/webhooks', { url: 'https://93.184.215.14/hooks' });
    expect(ok.status).toBe(201);
    expect(ok.body.data.environment).toBe('live');
    const patched = await request(live, 'PATCH', `/api/webhooks/${ok.body.data.id}`, {
      url: 'https://10.0.0.1/',
    });
    expect(patched.status).toBe(400);
  });
});

describe('deliveries', () => {
  test('a cancelled session is delivered signed, recorded, listable and resendable', async () => {
    const { body } = await request(sk, 'POST', '/api/webhooks', { url: receiver.url });
    const endpoint = body.data;
    const sessionId = await cancelledSession();
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1));
    const [delivery] = receiver.received;
    if (!delivery) throw new Error('nothing received');
    const event = WebhookEventSchema.parse(delivery.body);
    expect(event.type).toBe('session.cancelled');
    expect(event.data.session.id).toBe(sessionId);
    expect(event.data.session.status).toBe('cancelled');
    expect(delivery.headers['x-service-event-id']).toBe(event.id);
    const signature = String(delivery.headers['x-service-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(independentlyVerify(delivery.raw, signature, endpoint.secret)).toBe(true);
    expect(independentlyVerify(delivery.raw, signature, 'whsec_wrong')).toBe(false);
    expect(
      independentlyVerify(Buffer.concat([delivery.raw, Buffer.from(' ')]), signature, endpoint.secret),
    ).toBe(false);

    await vi.waitFor(async () => {
      const listed = await request(sk, 'GET', `/api/webhooks/${endpoint.id}/deliveries?status=succeeded`);
      expect(listed.body.data).toHaveLength(1);
    });
    const listed = await request(sk, 'GET', `/api/webhooks/${endpoint.id}/deliveries?eventId=${event.id}`);
    expect(listed.status).toBe(200);
    const [row] = listed.body.data;
    expect(row).toMatchObject({ eventId: event.id, eventType: 'session.cancelled', status: 'succeeded' });
    expect(row.attemptCount).toBe(1);
    expect(row.attempts).toHaveLength(1);
    // A loopback receiver: status and timing only, never what it answered (issue 8).
    expect(row.attempts[0]).toMatchObject({
      statusCode: 200,
      error: null,
      responseExcerpt: null,
      responseExcerptWithheld: 'receiver_not_public',
    });
    expect(Number.isInteger(row.attempts[0].latencyMs)).toBe(true);
    const none = await request(sk, 'GET', `/api/webhooks/${endpoint.id}/deliveries?status=failed`);
    expect(none.body.data).toEqual([]);

    const resent = await request(sk, 'POST', `/api/events/${event.id}/resend`, { endpointId: endpoint.id });
    expect(resent.status).toBe(202);
    expect(resent.body.data.eventId).toBe(event.id);
    expect(resent.body.data.deliveries).toHaveLength(1);
    await vi.waitFor(() => expect(receiver.received).toHaveLength(2));
    expect(receiver.received[1]?.body.id).toBe(event.id);
    const foreign = await request(otherSk, 'POST', `/api/events/${event.id}/resend`, {});
    expect(foreign.status).toBe(403);
    expect(foreign.body.meta.code).toBe('forbidden');
  });

  test('after a roll, both secrets sign for 24 hours: two v1 values', async () => {
    const { body } = await request(sk, 'POST', '/api/webhooks', { url: receiver.url });
    const oldSecret = body.data.secret as string;
    const rolled = await request(sk, 'POST', `/api/webhooks/${body.data.id}/roll-secret`);
    expect(rolled.status).toBe(200);
    const newSecret = rolled.body.data.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    await cancelledSession();
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1));
    const [delivery] = receiver.received;
    if (!delivery) throw new Error('nothing received');
    const signature = String(delivery.headers['x-service-signature']);
    expect(signature.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    expect(independentlyVerify(delivery.raw, signature, newSecret)).toBe(true);
    expect(independentlyVerify(delivery.raw, signature, oldSecret)).toBe(true);
  });

  test('an endpoint gets only the types it subscribes to, and nothing while disabled', async () => {
    const { body } = await request(sk, 'POST', '/api/webhooks', {
      url: receiver.url,
      events: ['session.successful'],
    });
    const other = await request(sk, 'POST', '/api/webhooks', {
      url: receiver.url,
      events: ['session.cancelled'],
    });
    await request(sk, 'PATCH', `/api/webhooks/${other.body.data.id}`, { enabled: false });
    await cancelledSession();
    expect((await request(sk, 'GET', `/api/webhooks/${body.data.id}/deliveries`)).body.data).toEqual([]);
    expect((await request(sk, 'GET', `/api/webhooks/${other.body.data.id}/deliveries`)).body.data).toEqual(
      [],
    );
    expect(receiver.received).toHaveLength(0);
  });

  test('pending retries of a disabled endpoint are parked, and released when it is enabled again', async () => {
    let status = 500;
    const flaky = await startReceiver((_received, res) => {
      res.statusCode = status;
      res.end(status === 200 ? 'ok' : 'down');
    });
    try {
      const { body } = await request(sk, 'POST', '/api/webhooks', { url: flaky.url });
      await cancelledSession();
      await vi.waitFor(async () => {
        const listed = await request(sk, 'GET', `/api/webhooks/${body.data.id}/deliveries`);
        expect(listed.body.data[0]?.attemptCount).toBeGreaterThanOrEqual(1);
      });
      await request(sk, 'PATCH', `/api/webhooks/${body.data.id}`, { enabled: false });
      const parked = await request(sk, 'GET', `/api/webhooks/${body.data.id}/deliveries`);
      expect(parked.body.data[0]).toMatchObject({ status: 'pending', nextAttemptAt: null });
      expect(parked.body.data[0].attempts[0]).toMatchObject({ statusCode: 500, responseExcerpt: null });
      status = 200;
      const enabled = await request(sk, 'PATCH', `/api/webhooks/${body.data.id}`, { enabled: true });
      expect(enabled.body.data.enabled).toBe(true);
      await vi.waitFor(async () => {
        const listed = await request(sk, 'GET', `/api/webhooks/${body.data.id}/deliveries`);
        expect(listed.body.data[0]?.status).toBe('succeeded');
      });
      expect(flaky.received.at(-1)?.body.type).toBe('session.cancelled');
    } finally {
      await flaky.close();
    }
  });
});
