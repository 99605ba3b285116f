import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { call, createSession, expectError } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 8, "Every answer in the envelope": requests Node used to answer itself, bare (no Host, an unknown
// Expect, CONNECT, timeouts), a body shorter than its Content-Length, a connection cap, and text a JSON body can
// spell but UTF-8 cannot store. fetch cannot send most of these, so they go over raw sockets.

let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection (it did, unless the test gave up waiting first). */
  closedByServer: boolean;
}

/** Parses one HTTP/1.1 answer out of the bytes a socket received. */
function parseAnswer(bytes: string, closedByServer: boolean): RawAnswer {
  const split = bytes.indexOf('\r\n\r\n');
  const head = split === -1 ? bytes : bytes.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(statusLine.split(' ')[1] ?? 0),
    headers,
    body: split === -1 ? '' : bytes.slice(split + 4),
    closedByServer,
  };
}

function open(baseUrl: string): Promise<Socket> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Writes `request` as is and collects what comes back until the server closes the socket, or until `giveUpMs`
 * (a safety net so a regression fails instead of hanging; the answer then says the server kept it open).
 */
async function exchange(baseUrl: string, request: string, giveUpMs = 10_000): Promise<RawAnswer> {
  const socket = await open(baseUrl);
  return new Promise((resolve) => {
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(parseAnswer(received, false));
    }, giveUpMs);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(received, true));
    });
    socket.on('error', () => undefined);
    socket.write(request);
  });
}

/** The envelope with a Request-Id in the header and the body, the same id in both. */
function expectEnvelope(answer: RawAnswer, status: number, code: string) {
  expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
    status,
    type: 'application/json; charset=utf-8',
  });
  const body = JSON.parse(answer.body) as { meta: Record<string, unknown> };
  expect(body.meta).toMatchObject({ statusCode: status, code });
  expect(typeof body.meta.message).toBe('string');
  expect(answer.headers['request-id']).toMatch(/^req_[0-9A-Za-z]{16}$/);
  expect(body.meta.requestId).toBe(answer.headers['request-id']);
}

describe('requests Node answered itself, now in the envelope with a Request-Id', () => {
  it('an HTTP/1.1 request without a Host header: 400', async () => {
    server = await startServer();
    const answer = await exchange(server.baseUrl, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectEnvelope(answer, 400, 'bad_request');
  });

  it('an HTTP/1.0 request needs no Host header (the rule is HTTP/1.1 only)', async () => {
    server = await startServer();
    const answer = await exchange(server.baseUrl, 'GET /health HTTP/1.0\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.headers['request-id']).toMatch(/^req_/);
  });

  it('Expect: 200-ok: 417', async () => {
    server = await startServer();
    const answer = await exchange(
      server.baseUrl,
      'POST /api/widget/bootstrap HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\n\r\n{}',
    );
    expectEnvelope(answer, 417, 'expectation_failed');
  });

  it('Expect: 100-continue still works: the body is asked for and the request answered', async () => {
    server = await startServer();
    const answer = await exchange(
      server.baseUrl,
      'POST /api/widget/bootstrap HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n' +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    // "HTTP/1.1 100 Continue" first, then the real answer: a validation error of the empty object.
    const final = parseAnswer(answer.body.slice(answer.body.indexOf('HTTP/1.1')), true);
    expect(answer.status).toBe(100);
    expectEnvelope(final, 400, 'validation_failed');
  });

  it('CONNECT: 405 (Node would drop the socket without a word)', async () => {
    server = await startServer();
    const answer = await exchange(
      server.baseUrl,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );
    expectEnvelope(answer, 405, 'method_not_allowed');
    expect(answer.closedByServer).toBe(true);
  });

  it('headers that never finish: 408 request_timeout (Node said 400), and the connection closes', async () => {
    server = await startServer({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const answer = await exchange(server.baseUrl, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: 1');
    expectEnvelope(answer, 408, 'request_timeout');
    expect(answer.closedByServer).toBe(true);
  });

  it('a body shorter than its Content-Length: 408 once the request timeout passes, the connection closed', async () => {
    server = await startServer({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const { secretKey } = (await server.createBusiness()).keys.test;
    const answer = await exchange(
      server.baseUrl,
      `POST /api/widget/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secretKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"amount":',
    );
    expectEnvelope(answer, 408, 'request_timeout');
    expect(answer.closedByServer).toBe(true);
    // Nothing was half-created.
    const list = await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: secretKey });
    expect(list.body.data).toEqual([]);
  });

  it('the default timeouts are seconds, not Node’s 60 s for headers and 300 s for a request', () => {
    return startServer().then((running) => {
      server = running;
      expect(running.service.config.headersTimeoutMs).toBeLessThanOrEqual(10_000);
      expect(running.service.config.requestTimeoutMs).toBeLessThanOrEqual(30_000);
    });
  });

  it('a push stream outlives the request timeout: it is a response, and its request was complete', async () => {
    server = await startServer({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const { secretKey } = (await server.createBusiness()).keys.test;
    const created = await createSession(server.baseUrl, secretKey);
    const booted = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: created.clientSecret },
    });
    const socket = await open(server.baseUrl);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
    });
    let closed = false;
    socket.on('close', () => {
      closed = true;
    });
    socket.write(
      `GET /api/widget/sessions/${created.id}/events HTTP/1.1\r\nHost: x\r\n` +
        `Authorization: Bearer ${booted.body.data.token}\r\n\r\n`,
    );
    // Well past the request timeout (and several of Node's checks of it), the stream is still open.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(received).toContain('event: status');
    expect(closed).toBe(false);
    socket.destroy();
  });

  it('past the connection cap, a request is answered 503 in the envelope and its connection closed', async () => {
    server = await startServer({ maxConnections: 2 });
    const held = [await open(server.baseUrl), await open(server.baseUrl)];
    try {
      const refused = await exchange(server.baseUrl, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      expectEnvelope(refused, 503, 'service_unavailable');
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.closedByServer).toBe(true);
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Once the held connections close, a new one is served again.
    await expect.poll(async () => (await call(server?.baseUrl ?? '', 'GET', '/health')).status).toBe(200);
  });
});

describe('text that UTF-8 cannot store', () => {
  const body = (name: string, metadata: string) =>
    `{"amount":500000,"currency":"NGN","payer":{"name":"${name}","email":"ada@example.com"},"metadata":${metadata}}`;

  it('a lone surrogate in the payer name is refused with 400 validation_failed naming payer.name', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: secretKey,
      raw: body('Ada \\ud800 Lovelace', '{}'),
      headers: { 'content-type': 'application/json' },
    });
    const error = expectError(response, 400, 'validation_failed');
    expect(error.errors?.map((entry) => entry.path)).toEqual(['payer.name']);
    // Nothing was stored, altered or not.
    const list = await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: secretKey });
    expect(list.body.data).toEqual([]);
  });

  it('in a metadata value or key too, at any depth of any route', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const inValue = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: secretKey,
      raw: body('Ada', '{"order":"\\udc00"}'),
      headers: { 'content-type': 'application/json' },
    });
    expect(expectError(inValue, 400, 'validation_failed').errors?.map((e) => e.path)).toEqual([
      'metadata.order',
    ]);
    const inKey = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: secretKey,
      raw: '{"url":"https://93.184.215.14/hooks","description":"ok","x":{"\\ud83d":1}}',
      headers: { 'content-type': 'application/json' },
    });
    expectError(inKey, 400, 'validation_failed');
  });

  it('a well-formed pair (an emoji) is stored exactly as sent', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const created = await createSession(server.baseUrl, secretKey, {
      payer: { name: 'Ada \ud83d\ude42', email: 'ada@example.com' },
    });
    expect(created.payer.name).toBe('Ada 🙂');
  });
});
