import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Logger, ManualClock } from '../../reference-server/src/index.ts';
import {
  bankNotification,
  bootstrap,
  call,
  createSession,
  expectError,
  postNotification,
  rawCall,
  sendRaw,
  sessionParams,
  testTransfer,
} from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Content rules (docs/protocol.md, Requests: 415, 413, 400, 404 in the envelope) and logs that never carry a secret.

type Entry = { level: string; message: string; fields?: Record<string, unknown> };
const entries: Entry[] = [];
// Captures exactly what callers hand the logger, before any redaction: callers must never pass a secret.
const capturing: Logger = {
  info: (message, fields) => void entries.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
  warn: (message, fields) => void entries.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
  error: (message, fields) => void entries.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
};

let server: RunningServer;
let key: string;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-07-01T10:00:00Z'));
  server = await startServer({ bodyLimitBytes: 8 * 1024 }, { logger: capturing, clock });
  key = (await server.createBusiness({ name: 'Content' })).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

describe('content rules', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['form-encoded', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['a JSON-looking type', 'application/jsonp'],
  ])('POST with %s → 415 unsupported_media_type', async (_what, type) => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      raw: JSON.stringify(sessionParams()),
      headers: { 'content-type': type },
    });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('POST with a body and no Content-Type at all → 415', async () => {
    const response = await rawCall(
      server.baseUrl,
      'POST',
      '/api/widget/sessions',
      { authorization: `Bearer ${key}`, 'content-length': '2' },
      Buffer.from('{}'),
    );
    expect(response.status).toBe(415);
    expect(JSON.parse(response.text).meta).toMatchObject({ statusCode: 415, code: 'unsupported_media_type' });
  });

  it('PATCH without JSON → 415 (the rule holds before routing)', async () => {
    const response = await call(server.baseUrl, 'PATCH', '/api/widget/sessions', {
      token: key,
      raw: 'x=1',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('JSON in a charset other than UTF-8 → 415', async () => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      raw: JSON.stringify(sessionParams()),
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('accepts application/json with parameters and in another case', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
      const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: key,
        raw: JSON.stringify(sessionParams()),
        headers: { 'content-type': type },
      });
      expect(response.status, `${type}: ${response.text}`).toBe(201);
    }
  });

  it('a body over the limit → 413 payload_too_large', async () => {
    const metadata = { big: 'x'.repeat(9 * 1024) };
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      json: { ...sessionParams(), metadata },
    });
    expectError(response, 413, 'payload_too_large');
  });

  it('a body announced over the limit → 413 at once, before the body arrives, and the connection closed', async () => {
    /** Headers announcing 10 MB, then 5 bytes of it, and nothing more: what comes back within a second. */
    const announce = async (path: string, headers: string) => {
      // Held until the request timeout (30 s), then 408, when the body parser waited for the whole body.
      const { answer, closedByServer: closedAtOnce } = await sendRaw(
        server.baseUrl,
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: 10485760\r\n\r\nhello`,
      );
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      return { closedAtOnce, head, body };
    };
    const json = 'Content-Type: application/json\r\n';
    for (const [path, headers] of [
      ['/api/widget/sessions', `Authorization: Bearer ${key}\r\n${json}`],
      ['/api/widget/bootstrap', json],
      ['/bank/notifications', `${json}X-Bank-Signature: t=1,v1=00\r\n`],
    ] as const) {
      const { closedAtOnce, head, body } = await announce(path, headers);
      expect({ path, closedAtOnce, status: head.split(' ')[1] }).toEqual({
        path,
        closedAtOnce: true,
        status: '413',
      });
      expect(JSON.parse(body).meta).toMatchObject({ statusCode: 413, code: 'payload_too_large' });
      expect(head.toLowerCase()).toContain('\r\nconnection: close');
    }
    // The portal's forms have a limit of their own (16 KiB), and answer a page.
    const form = await announce('/portal/sign-in', 'Content-Type: application/x-www-form-urlencoded\r\n');
    expect({ closedAtOnce: form.closedAtOnce, status: form.head.split(' ')[1] }).toEqual({
      closedAtOnce: true,
      status: '413',
    });
  });

  it('a bank notification over 64 KiB → 413 in the envelope', async () => {
    const response = await call(server.baseUrl, 'POST', '/bank/notifications', {
      raw: 'x'.repeat(65 * 1024),
      headers: { 'content-type': 'application/json', 'x-bank-signature': 't=1,v1=00' },
    });
    expectError(response, 413, 'payload_too_large');
  });

  it.each([
    ['truncated', '{"amount": 5', 'malformed_json'],
    ['a trailing comma', '{"amount": 5,}', 'malformed_json'],
    ['single quotes', "{'amount': 5}", 'malformed_json'],
    // An empty body is no body: the session fields are missing.
    ['empty', '', 'validation_failed'],
  ] as const)('a JSON body that is %s → 400 %s', async (_what, raw, code) => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      raw,
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, code);
  });

  it('malformed JSON to the unauthenticated bootstrap → 400 malformed_json', async () => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      raw: '{"clientSecret":',
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, 'malformed_json');
  });

  it.each([
    ['GET', '/'],
    ['GET', '/api'],
    ['GET', '/api/widget/sessions/ses_x/nothing'],
    ['DELETE', '/api/widget/sessions'],
    ['PUT', '/api/widget/sessions/ses_x'],
    ['GET', '/api/widget/bootstrap'],
    ['GET', '/bank/notifications'],
    ['POST', '/api/v2/sessions'],
  ])('%s %s → 404 route_not_found', async (method, path) => {
    const response = await call(server.baseUrl, method, path, { token: key });
    expectError(response, 404, 'route_not_found');
  });

  it('marks every response no-store', async () => {
    const response = await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: key });
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-powered-by')).toBeNull();
  });
});

describe('logs', () => {
  it('carry no key, client secret or widget token through a whole flow with errors', async () => {
    const secrets: string[] = [key];
    const publishable = await server.createBusiness({ name: 'Logs' });
    secrets.push(
      publishable.keys.test.secretKey,
      publishable.keys.test.publishableKey,
      publishable.keys.live.secretKey,
    );

    const created = await createSession(server.baseUrl, key, {}, { 'idempotency-key': 'log-flow' });
    secrets.push(created.clientSecret);
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    secrets.push(opened.token);
    // Error paths, each holding a secret somewhere in the request.
    await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: created.clientSecret });
    await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: opened.token });
    await call(server.baseUrl, 'GET', '/api/widget/sessions', {
      token: publishable.keys.test.publishableKey,
    });
    await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: publishable.keys.live.secretKey });
    await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: created.clientSecret },
    });
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/accounts`, { token: key });
    await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      raw: `{"clientSecret":"${created.clientSecret}"`,
      headers: { 'content-type': 'application/json' },
    });
    await call(server.baseUrl, 'GET', `/nowhere/${key}`, { token: key });
    // A mismatch, the exact amount, and a forged credit to the closed account: the bank and processor log.
    await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, 1);
    await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, created.amount);
    await postNotification(server, bankNotification(opened.virtualAccount.accountNumber, created.amount), {
      nowMs: clock.now(),
    });
    await postNotification(server, bankNotification(opened.virtualAccount.accountNumber, 1), { secret: key });

    // The flow did log (the forged credit is an error a person must see), so the check below is not vacuous.
    expect(entries.some((entry) => entry.level === 'error')).toBe(true);
    const logged = JSON.stringify(entries);
    for (const secret of secrets) expect(logged).not.toContain(secret);
    expect(logged).not.toMatch(
      /\b(sk|pk)_(test|live)_[0-9A-Za-z]{32}|\bcs_(test|live)_[0-9A-Za-z]{32,40}|\bwt_[0-9A-Za-z]{32}/,
    );
  });
});
