import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { openLinkPage, submitLinkForm } from '../support/link-page.ts';
import {
  expectRefusalPage,
  type IdleConnection,
  idleConnections,
  requestFrom,
} from '../support/loopback-connections.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The widget hosts' total connection cap (`widgetMaxConnections`) and header/request timeouts
// (`widgetHeadersTimeoutMs`, `widgetRequestTimeoutMs`), on a real service with real sockets on loopback. The
// per-address cap is held by widget-host-connections.test.ts; here the connections come from several
// addresses of 127/8, so only the total can refuse them. The timeouts are cut to a few hundred milliseconds (the
// request's to 1.5 s) so a slow client is seen cut in well under two seconds; every count asserted is a final state.

const TOTAL = 3;
const HEADERS_MS = 300;
// Well apart, so a cut at the header timeout cannot be the request timeout's (Node's header timeout defaults
// to the request timeout when it is lower than a minute).
const REQUEST_MS = 1_500;
const connections = idleConnections();
const builtWidget = readFileSync(
  join(
    dirname(createRequire(import.meta.url).resolve('@servicepay/widget/package.json')),
    'dist',
    'widget.js',
  ),
);

const portOf = (url: string) => Number(new URL(url).port);

afterEach(() => {
  connections.destroyAll();
});

/** The refusal as written on the wire, and which cap it names (`total`: the checkout's, `address`: the network's). */
function refusalOf(answer: string): 'total' | 'address' | undefined {
  const body = expectRefusalPage(answer);
  if (body.includes('The checkout has too many connections open')) return 'total';
  if (body.includes('This network has too many connections')) return 'address';
  return undefined;
}

describe("a widget host's total connection cap (widgetMaxConnections)", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ widgetMaxConnections: TOTAL });
  });

  afterAll(async () => {
    await server?.close();
  });

  for (const environment of ['test', 'live'] as const) {
    it(`${environment} host: with ${TOTAL} held from ${TOTAL} addresses, the next connection from a fourth is answered the 503 page at once and closed; the other host and the API are served`, async () => {
      const host = server.widgetUrls[environment];
      const other = server.widgetUrls[environment === 'test' ? 'live' : 'test'];
      const held: IdleConnection[] = [];
      for (const address of ['127.0.0.31', '127.0.0.32', '127.0.0.33']) {
        held.push(await connections.open(portOf(host), address));
      }
      // It sends nothing: the answer comes the moment it is accepted, naming the checkout, not the network.
      const refused = await connections.open(portOf(host), '127.0.0.34');
      await refused.closed;
      expect(refusalOf(refused.answer())).toBe('total');
      // A payer's request on a new connection gets the same page, never a hang.
      const request = await requestFrom('127.0.0.35', host, { path: '/latest/widget.js', timeoutMs: 5_000 });
      expect(request.status).toBe(503);
      expect(request.text).toContain('The checkout has too many connections open');
      // The held ones are not answered; each listener counts its own, so the other host and the API serve.
      expect(held.map((connection) => connection.answer())).toEqual(Array(TOTAL).fill(''));
      expect((await requestFrom('127.0.0.34', other, { path: '/latest/widget.js' })).status).toBe(200);
      expect((await requestFrom('127.0.0.34', server.baseUrl, { path: '/health' })).status).toBe(200);
      // A place frees when a held connection closes (once the server has seen it close).
      held[0]?.socket.destroy();
      await expect
        .poll(async () => (await requestFrom('127.0.0.34', host, { path: '/latest/widget.js' })).status, {
          timeout: 5_000,
        })
        .toBe(200);
    });
  }

  it('a flood from many addresses: exactly the total held, every other connection answered 503 and closed', async () => {
    const FLOOD = 24;
    const host = server.widgetUrls.test;
    const flood = await Promise.all(
      Array.from({ length: FLOOD }, (_, i) => connections.open(portOf(host), `127.0.1.${i + 1}`)),
    );
    await expect
      .poll(() => flood.filter((socket) => socket.isClosed()).length, { timeout: 5_000 })
      .toBe(FLOOD - TOTAL);
    for (const socket of flood.filter((each) => each.isClosed())) {
      expect(refusalOf(socket.answer())).toBe('total');
    }
    const held = flood.filter((socket) => !socket.isClosed());
    expect(held.map((socket) => socket.answer())).toEqual(Array(TOTAL).fill(''));
  });

  it('counts the trusted proxies too (exempt from the per-address cap, not from the total)', async () => {
    const balanced = await startServer({ widgetMaxConnections: TOTAL, trustedProxies: ['loopback'] });
    try {
      const host = balanced.widgetUrls.test;
      for (let i = 0; i < TOTAL; i++) await connections.open(portOf(host), '127.0.0.1');
      const refused = await connections.open(portOf(host), '127.0.0.1');
      await refused.closed;
      expect(refusalOf(refused.answer())).toBe('total');
    } finally {
      connections.destroyAll();
      await balanced.close();
    }
  });

  it('over both caps at once, a connection gets one answer (the total, checked first), not two', async () => {
    const both = await startServer({ widgetMaxConnections: TOTAL, maxConnectionsPerAddress: TOTAL });
    try {
      const host = both.widgetUrls.live;
      for (let i = 0; i < TOTAL; i++) await connections.open(portOf(host), '127.0.0.36');
      const refused = await connections.open(portOf(host), '127.0.0.36');
      await refused.closed;
      // One status line, one page: `refusalOf` checks the Content-Length against all that followed the head.
      expect(refused.answer().match(/HTTP\/1\.1 503/g)).toHaveLength(1);
      expect(refusalOf(refused.answer())).toBe('total');
    } finally {
      connections.destroyAll();
      await both.close();
    }
  });
});

/** Opens a raw connection to `url`'s port; resolves once connected. */
async function open(url: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port: portOf(url) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/**
 * Writes `bytes` (nothing for an empty string) and waits up to `waitMs` for the server to close the
 * connection: what it wrote, whether it closed it, and how long after the write it did.
 */
async function cutOff(url: string, bytes: string, waitMs = 3_000) {
  const socket = await open(url);
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const started = performance.now();
  if (bytes) socket.write(bytes);
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  socket.destroy();
  return { received, closed, afterMs: performance.now() - started };
}

/** Reads one HTTP/1.1 answer with a `Content-Length` off a socket that stays open. */
function nextAnswer(socket: Socket): Promise<{ head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return reject(new Error('the server had closed the connection'));
    let bytes = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const split = bytes.indexOf('\r\n\r\n');
      if (split === -1) return;
      const head = bytes.subarray(0, split).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (bytes.length < split + 4 + length) return;
      socket.off('data', onData);
      resolve({ head, body: bytes.subarray(split + 4, split + 4 + length) });
    };
    socket.on('data', onData);
    socket.once('close', () =>
      reject(new Error(`closed before a whole answer: ${bytes.toString('latin1')}`)),
    );
  });
}

describe("a widget host's header and request timeouts (widgetHeadersTimeoutMs, widgetRequestTimeoutMs)", () => {
  let server: RunningServer;
  let secretKey: string;

  beforeAll(async () => {
    server = await startServer({ widgetHeadersTimeoutMs: HEADERS_MS, widgetRequestTimeoutMs: REQUEST_MS });
    secretKey = (await server.createBusiness()).keys.test.secretKey;
  });

  afterAll(async () => {
    await server?.close();
  });

  it('the defaults are seconds, not Node’s 60 s for headers and 300 s for a request', async () => {
    const running = await startServer();
    try {
      expect(running.service.config.widgetHeadersTimeoutMs).toBeLessThanOrEqual(10_000);
      expect(running.service.config.widgetRequestTimeoutMs).toBeLessThanOrEqual(30_000);
      expect(running.service.config.widgetMaxConnections).toBeLessThanOrEqual(
        running.service.config.maxConnections,
      );
    } finally {
      await running.close();
    }
  });

  for (const environment of ['test', 'live'] as const) {
    it(`${environment} host: headers that never finish are cut with 408 after the header timeout, not a minute later`, async () => {
      const host = server.widgetUrls[environment];
      const slow = await cutOff(host, 'GET /latest/widget.js HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1');
      expect(slow.closed).toBe(true);
      expect(slow.received).toMatch(/^HTTP\/1\.1 408 /);
      // Not before the timeout (the request was given its time), and by it, not by the request timeout.
      expect(slow.afterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
      expect(slow.afterMs).toBeLessThan(REQUEST_MS - 300);
    });
  }

  it('a connection that sends nothing at all is closed by the header timeout too', async () => {
    const silent = await cutOff(server.widgetUrls.test, '');
    expect(silent.closed).toBe(true);
    expect(silent.afterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(silent.afterMs).toBeLessThan(REQUEST_MS - 300);
  });

  it('a payment link form whose body never finishes: 408 after the request timeout, and no session made', async () => {
    const created = await call(server.baseUrl, 'POST', '/api/payment-links', {
      token: secretKey,
      json: { name: 'Ankara fabric', amount: 500_000, currency: 'NGN' },
    });
    expect(created.status, created.text).toBe(201);
    const url: string = created.body.data.url;
    const visit = await openLinkPage(url);
    expect(visit.status).toBe(200);
    const form = new URLSearchParams({
      form_token: visit.token ?? '',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
    }).toString();
    const { host: authority, origin, pathname } = new URL(url);
    const slow = await cutOff(
      url,
      `POST ${pathname} HTTP/1.1\r\nHost: ${authority}\r\nOrigin: ${origin}\r\nCookie: ${visit.cookie}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n` +
        form.slice(0, 20),
    );
    expect(slow.closed).toBe(true);
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.afterMs).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    const sessions = await call(server.baseUrl, 'GET', '/api/widget/sessions?environment=test', {
      token: secretKey,
    });
    expect(sessions.status).toBe(200);
    expect(sessions.body.data).toEqual([]);
    // The same form sent whole is taken (so the nothing above was the timeout's doing, not a bad form).
    const whole = await submitLinkForm(url, visit, { name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(whole.status, whole.html).toBe(303);
  });

  it('a browser-like fetch of widget.js is served whole, and its kept-alive connection outlives the timeouts', async () => {
    const host = server.widgetUrls.test;
    const response = await fetch(`${host}/latest/widget.js`, {
      headers: {
        accept: '*/*',
        'accept-language': 'en-GB,en;q=0.9',
        'user-agent':
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        'sec-fetch-dest': 'script',
        'sec-fetch-mode': 'cors',
        'sec-fetch-site': 'cross-site',
        origin: 'https://shop.example',
        referer: 'https://shop.example/checkout',
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(Buffer.from(await response.arrayBuffer()).equals(builtWidget)).toBe(true);
    // A browser keeps the connection for the page's next file: idle past both timeouts (and many of Node's
    // checks of them), yet within the 5 s keep-alive, it is still there and answers the revalidation.
    const socket = await open(host);
    try {
      socket.write('GET /latest/widget.js HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n');
      const first = await nextAnswer(socket);
      expect(first.head).toMatch(/^HTTP\/1\.1 200 /);
      expect(first.body.equals(builtWidget)).toBe(true);
      const etag = /\r\netag: ([^\r]+)/i.exec(first.head)?.[1];
      expect(etag).toBeTruthy();
      await new Promise((resolve) => setTimeout(resolve, REQUEST_MS + 300));
      socket.write(`GET /latest/widget.js HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: ${etag}\r\n\r\n`);
      expect((await nextAnswer(socket)).head).toMatch(/^HTTP\/1\.1 304 /);
    } finally {
      socket.destroy();
    }
  });
});
