import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent, ServicePay } from '@servicepay/node';
import { type CreatedBusiness, ErrorBodySchema } from '@servicepay/node/protocol';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../support/server.ts';
import { contractFetch } from './contract-fetch.ts';

// A merchant app that registers its webhook endpoint at every start, against the real reference server over
// loopback; every answer is held to the contract's schemas (contract-fetch.ts).
const contract = contractFetch();
const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

const waitFor = async <T>(check: () => T | undefined, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('webhookEndpoints.upsert: registering at every start', () => {
  let server: RunningServer;
  let receiver: Server;
  let receiverUrl: string;
  const received: { path: string; body: Buffer; signature: string | undefined }[] = [];

  const clientOf = (business: CreatedBusiness) =>
    new ServicePay(business.keys.test.secretKey, { baseUrl: server.baseUrl, fetch: contract.fetch });

  beforeAll(async () => {
    server = await startServer();
    const app = express();
    app.post('/hooks/:name', express.raw({ type: 'application/json' }), (req, res) => {
      received.push({ path: req.path, body: req.body as Buffer, signature: req.get('x-service-signature') });
      res.sendStatus(204);
    });
    receiver = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await server?.close();
  });

  it('20 starts leave one endpoint, and the secret the app kept from the first still verifies', async () => {
    const shop = await server.createBusiness({ name: 'Restarting Shop' });
    const url = `${receiverUrl}/restarts`;
    let storedSecret: string | null = null;
    const ids = new Set<string>();
    for (let start = 1; start <= 20; start++) {
      // Each start is a new process: a new client, nothing remembered but the stored secret.
      const servicepay = clientOf(shop);
      const result = await servicepay.webhookEndpoints.upsert({ url, events: ['session.successful'] });
      if (start === 1) {
        expect(result.created).toBe(true);
        expect(result.secret).toMatch(/^whsec_/);
        storedSecret = result.secret;
      } else {
        expect(result).toMatchObject({ created: false, secret: null });
      }
      expect(result.endpoint).toMatchObject({ url, events: ['session.successful'], enabled: true });
      ids.add(result.endpoint.id);
      await servicepay.close();
    }
    expect(ids.size).toBe(1);

    const servicepay = clientOf(shop);
    const all = await servicepay.webhookEndpoints.list({ limit: 100 });
    expect(all.data.map((endpoint) => endpoint.url)).toEqual([url]);
    // Far below the limit: a 17th distinct URL can still be registered.
    const more = await Promise.all(
      Array.from({ length: 15 }, (_, i) => servicepay.webhookEndpoints.create({ url: `${url}-${i}` })),
    );
    expect(more).toHaveLength(15);

    const created = await servicepay.sessions.create({ amount: 77_000, currency: 'NGN', payer });
    await servicepay.testHelpers.pay(created.id);
    const delivery = await waitFor(() =>
      received.find((r) => r.path === '/hooks/restarts' && r.body.toString().includes(created.id)),
    );
    const event = constructEvent(delivery.body, delivery.signature ?? '', storedSecret ?? '');
    expect(event.type).toBe('session.successful');
    expect(event.data.session).toMatchObject({ id: created.id, amount: 77_000, status: 'successful' });
    expect(received.filter((r) => r.path === '/hooks/restarts')).toHaveLength(1);
    await servicepay.close();
  });

  it('a start with other events or description updates the endpoint in place, and leaves enabled alone', async () => {
    const shop = await server.createBusiness({ name: 'Changing Shop' });
    const servicepay = clientOf(shop);
    const url = `${receiverUrl}/changing`;
    const first = await servicepay.webhookEndpoints.upsert({ url, events: ['session.successful'] });
    await servicepay.webhookEndpoints.update(first.endpoint.id, { enabled: false });

    const changed = await servicepay.webhookEndpoints.upsert({
      url,
      events: ['session.successful', 'session.mismatch'],
      description: 'v2 of the app',
    });
    expect(changed).toMatchObject({ created: false, secret: null });
    expect(changed.endpoint).toMatchObject({
      id: first.endpoint.id,
      events: ['session.successful', 'session.mismatch'],
      description: 'v2 of the app',
      enabled: false,
    });
    // The same settings in another order change nothing (no write, same updatedAt).
    const same = await servicepay.webhookEndpoints.upsert({
      url,
      events: ['session.mismatch', 'session.successful'],
    });
    expect(same.endpoint.updatedAt).toBe(changed.endpoint.updatedAt);
    expect((await servicepay.webhookEndpoints.list()).data).toHaveLength(1);

    await servicepay.close();
  });

  it('GET /api/webhooks?url= finds only that URL, of the caller only', async () => {
    const shop = await server.createBusiness({ name: 'Filter Shop' });
    const other = await server.createBusiness({ name: 'Other Filter Shop' });
    const mine = clientOf(shop);
    const theirs = clientOf(other);
    const url = `${receiverUrl}/filter`;
    const wanted = await mine.webhookEndpoints.create({ url });
    await mine.webhookEndpoints.create({ url: `${url}/deeper` });
    await mine.webhookEndpoints.create({ url: `${url}?x=1` });
    await theirs.webhookEndpoints.create({ url });

    const found = await mine.webhookEndpoints.list({ url });
    expect(found.data.map((endpoint) => endpoint.id)).toEqual([wanted.id]);
    expect((await mine.webhookEndpoints.list({ url: `${receiverUrl}/nothing-here` })).data).toEqual([]);

    // The other business's upsert finds its own endpoint, not this one.
    const theirUpsert = await theirs.webhookEndpoints.upsert({ url });
    expect(theirUpsert.created).toBe(false);
    expect(theirUpsert.endpoint.id).not.toBe(wanted.id);

    const tooLong = await contract.fetch(
      `${server.baseUrl}/api/webhooks?url=${encodeURIComponent(`${url}/${'a'.repeat(2100)}`)}`,
      { headers: { authorization: `Bearer ${shop.keys.test.secretKey}` } },
    );
    expect(tooLong.status).toBe(400);
    const { meta } = ErrorBodySchema.parse(await tooLong.json());
    expect(meta.code).toBe('validation_failed');
    await mine.close();
    await theirs.close();
  });
});
