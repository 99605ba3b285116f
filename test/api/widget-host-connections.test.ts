import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import {
  expectRefusalPage,
  type IdleConnection,
  idleConnections,
  requestFrom,
} from '../support/loopback-connections.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The widget hosts cap the connections one address holds, as the API server does and with its mechanism
// (`capConnectionsPerAddress`) and its setting (`maxConnectionsPerAddress`), on a real service on loopback:
// one address of 127/8 holds or floods, 127.0.0.2 is another payer. Each test floods from an address of its
// own, so a connection an earlier test closed, which the server may not have seen close yet, counts for no
// later one. A small cap keeps it quick; every count asserted is a final state (a connection is held or was
// refused), never a sample taken while sockets are on the way.

const CAP = 4;
const connections = idleConnections();
let server: RunningServer;
let checkoutPath: string;

beforeAll(async () => {
  server = await startServer({ maxConnectionsPerAddress: CAP });
  const secretKey = (await server.createBusiness()).keys.test.secretKey;
  const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
    token: secretKey,
    json: { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
  });
  expect(created.status).toBe(201);
  // The hosted checkout, on the test host: the path alone (the client secret rides in the fragment).
  checkoutPath = new URL(created.body.data.url).pathname;
  expect(checkoutPath).toMatch(/^\/checkout\//);
});

afterEach(() => {
  connections.destroyAll();
});

afterAll(async () => {
  await server?.close();
});

const portOf = (url: string) => Number(new URL(url).port);

/** `count` idle connections from `address`, opened one after another (so each is accepted before the next). */
async function hold(url: string, address: string, count: number): Promise<IdleConnection[]> {
  const held: IdleConnection[] = [];
  for (let i = 0; i < count; i++) held.push(await connections.open(portOf(url), address));
  return held;
}

describe("the connections one address may hold on a widget host (the API's maxConnectionsPerAddress)", () => {
  for (const [environment, address] of [
    ['test', '127.0.0.11'],
    ['live', '127.0.0.12'],
  ] as const) {
    it(`${environment} host: past the cap, answers the next connection a 503 page at once and closes it; other payers, the other host and the API are served`, async () => {
      const host = server.widgetUrls[environment];
      const other = server.widgetUrls[environment === 'test' ? 'live' : 'test'];
      const held = await hold(host, address, CAP);
      // It sends nothing: the answer comes the moment it is accepted.
      const refused = await connections.open(portOf(host), address);
      await refused.closed;
      expectRefusalPage(refused.answer());
      // The held ones are not answered, and another address is served meanwhile: the script and, on the test
      // host, the hosted checkout page.
      expect(held.map((connection) => connection.answer())).toEqual(Array(CAP).fill(''));
      expect((await requestFrom('127.0.0.2', host, { path: '/latest/widget.js' })).status).toBe(200);
      if (environment === 'test') {
        const page = await requestFrom('127.0.0.2', host, { path: checkoutPath });
        expect(page.status).toBe(200);
        expect(page.text).toContain('<!doctype html>');
      }
      // Each listener counts its own: the same address still reaches the other host and the API.
      expect((await requestFrom(address, other, { path: '/latest/widget.js' })).status).toBe(200);
      expect((await requestFrom(address, server.baseUrl, { path: '/health' })).status).toBe(200);
      // A place held frees when its connection closes (once the server has seen it close).
      held[0]?.socket.destroy();
      await expect
        .poll(async () => (await requestFrom(address, host, { path: '/latest/widget.js' })).status, {
          timeout: 5_000,
        })
        .toBe(200);
    });
  }

  it("a payer's request over the cap gets the 503 page with Retry-After, never a hang", async () => {
    await hold(server.widgetUrls.test, '127.0.0.13', CAP);
    // The request is written as soon as the connection opens, as a browser does.
    const answer = await requestFrom('127.0.0.13', server.widgetUrls.test, {
      path: checkoutPath,
      timeoutMs: 5_000,
    });
    expect(answer.status).toBe(503);
    expect(answer.text).toContain('Too many connections');
    // The same on the wire, for a request sent whole the moment the connection opened.
    const raw = await connections.open(portOf(server.widgetUrls.test), '127.0.0.13');
    raw.socket.write(`GET ${checkoutPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\n\r\n`);
    await raw.closed;
    expectRefusalPage(raw.answer());
  });

  it('a flood of idle connections from one address: exactly the cap held, every other answered 503 and closed', async () => {
    const FLOOD = 60;
    const host = server.widgetUrls.test;
    const flood = await Promise.all(
      Array.from({ length: FLOOD }, () => connections.open(portOf(host), '127.0.0.14')),
    );
    // Every connection is accepted in turn: the first CAP are held, each later one is refused while they are.
    await expect
      .poll(() => flood.filter((socket) => socket.isClosed()).length, { timeout: 5_000 })
      .toBe(FLOOD - CAP);
    const refused = flood.filter((socket) => socket.isClosed());
    for (const socket of refused) expectRefusalPage(socket.answer());
    const held = flood.filter((socket) => !socket.isClosed());
    expect(held.map((socket) => socket.answer())).toEqual(Array(CAP).fill(''));
    // Another payer is served throughout, the page included.
    expect((await requestFrom('127.0.0.2', host, { path: checkoutPath })).status).toBe(200);
    // The held ones are still held, unanswered: nothing else freed a place.
    expect(held.every((socket) => !socket.isClosed() && socket.answer() === '')).toBe(true);
  });
});

describe('behind a trusted load balancer', () => {
  it('a widget host does not count the proxy named in trustedProxies (a balancer is one address carrying every payer), and counts any other peer', async () => {
    const balanced = await startServer({ maxConnectionsPerAddress: CAP, trustedProxies: ['loopback'] });
    try {
      for (const [running, status] of [
        [server, 503],
        [balanced, 200],
      ] as const) {
        const host = running.widgetUrls.test;
        await hold(host, '127.0.0.15', CAP + 2);
        expect((await requestFrom('127.0.0.15', host, { path: '/latest/widget.js' })).status).toBe(status);
      }
    } finally {
      connections.destroyAll();
      await balanced.close();
    }
  });
});
