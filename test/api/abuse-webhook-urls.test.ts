import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 8, "The SSRF policy covers every spelling": the URLs the probe registered as live endpoints are refused
// at registration (POST) and on change (PATCH), with the field named.

let server: RunningServer;
let liveKey: string;
let testKey: string;

beforeAll(async () => {
  server = await startServer();
  const shop = await server.createBusiness({ name: 'Hooks', kycApproved: true });
  liveKey = shop.keys.live.secretKey;
  testKey = shop.keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

const REFUSED_LIVE = [
  'https://[::ffff:0:7f00:1]/', // IPv4-translated 127.0.0.1
  'https://[64:ff9b:1::a9fe:a9fe]/', // local-use NAT64 of the metadata address
  'https://LOCALHOST./', // a fully qualified spelling of localhost
  'https://[2002:a9fe:a9fe::]/', // 6to4 of the metadata address
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', // Teredo
  'https://[::ffff:7f00:1]/', // IPv4-mapped loopback, hex spelling
  'https://shop.localhost./hooks',
];

describe('live endpoints', () => {
  it.each(REFUSED_LIVE)('POST %s is refused with 400 validation_failed on url', async (url) => {
    const response = await call(server.baseUrl, 'POST', '/api/webhooks', { token: liveKey, json: { url } });
    const body = expectError(response, 400, 'validation_failed');
    expect(body.errors?.map((entry) => entry.path)).toEqual(['url']);
  });

  it('PATCH to one of them is refused too, and the endpoint keeps its URL', async () => {
    const created = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: liveKey,
      json: { url: 'https://93.184.215.14/hooks' },
    });
    expect(created.status, created.text).toBe(201);
    for (const url of REFUSED_LIVE) {
      const response = await call(server.baseUrl, 'PATCH', `/api/webhooks/${created.body.data.id}`, {
        token: liveKey,
        json: { url },
      });
      expectError(response, 400, 'validation_failed');
    }
    const after = await call(server.baseUrl, 'GET', `/api/webhooks/${created.body.data.id}`, {
      token: liveKey,
    });
    expect(after.body.data.url).toBe('https://93.184.215.14/hooks');
  });
});

describe('test endpoints', () => {
  it('keep loopback for a receiver on the developer’s machine, in any spelling of it', async () => {
    for (const url of [
      'http://127.0.0.1:3000/hooks',
      'http://[::1]:3000/hooks',
      'http://LOCALHOST.:3000/hooks',
    ]) {
      const response = await call(server.baseUrl, 'POST', '/api/webhooks', { token: testKey, json: { url } });
      expect(response.status, response.text).toBe(201);
    }
  });

  it('but never the translated or NAT64 forms, which are not loopback to a socket', async () => {
    for (const url of ['http://[::ffff:0:7f00:1]:3000/', 'http://[64:ff9b::7f00:1]:3000/']) {
      const response = await call(server.baseUrl, 'POST', '/api/webhooks', { token: testKey, json: { url } });
      expectError(response, 400, 'validation_failed');
    }
  });
});
