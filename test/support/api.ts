import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import {
  type BankNotification,
  BootstrapResultSchema,
  CreatedSessionSchema,
  type CreateSessionParams,
  ErrorBodySchema,
  type ErrorCode,
  envelopeOf,
  SessionSchema,
  SimulatedTransferSchema,
} from '@servicepay/node/protocol';
import { expect } from 'vitest';
import { newId } from '../../reference-server/src/internal/random.ts';
import { signPayload } from '../../reference-server/src/internal/signature.ts';
import type { RunningServer } from './server.ts';

/** One HTTP exchange as a test sees it: status, headers, the parsed body (if JSON) and the raw text. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever the server sent and checks it with schemas
  body: any;
  text: string;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** JSON-encoded with `Content-Type: application/json`. */
  json?: unknown;
  /** Sent as is; set the content type in `headers` yourself. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** A tiny fetch wrapper over loopback. Never throws on a 4xx/5xx: the test asserts on it. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers,
    // A Buffer is sent as its bytes; the view keeps fetch's BodyInit typing the same under DOM and Node types.
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : new Uint8Array(body) }),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** A raw HTTP/1.1 request with the path exactly as given (no URL normalisation), for the fuzz and `..` paths. */
export function rawCall(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers, agent: false },
      (res) => {
        // A push stream stays open by design: report its status and headers, then hang up.
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const SECRET_VALUE =
  /\b(sk|pk)_(test|live)_[0-9A-Za-z]{32}\b|\bcs_(test|live)_[0-9A-Za-z]{32,40}\b|\bwt_[0-9A-Za-z]{32}\b/;

/** What no error response may carry: a stack frame, SQL, or the value of a key, client secret or token. */
export function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/\bat .+\(.+:\d+:\d+\)|\n\s+at /);
  expect(text).not.toMatch(/SQLITE|\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|\bUPDATE\b.+\bSET\b/i);
  expect(text).not.toMatch(SECRET_VALUE);
}

/**
 * Asserts an error in the envelope: the HTTP status, `meta.statusCode` equal to it, a string message, the
 * stable `code`, and nothing that leaks. Returns the parsed body for further checks.
 */
export function expectError(response: ApiResponse, status: number, code: ErrorCode) {
  expect({ status: response.status, code: response.body?.meta?.code }).toEqual({ status, code });
  const body = ErrorBodySchema.parse(response.body);
  expect(body.meta.statusCode).toBe(status);
  expect(typeof body.meta.message).toBe('string');
  expect(body.meta.message.length).toBeGreaterThan(0);
  expect(Object.keys(response.body).every((key) => key === 'meta' || key === 'errors')).toBe(true);
  expectNoLeak(response.text);
  return body;
}

export const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

export const sessionParams = (overrides: Partial<CreateSessionParams> = {}): CreateSessionParams => ({
  amount: 500_000,
  currency: 'NGN',
  payer,
  ...overrides,
});

const CreatedEnvelope = envelopeOf(CreatedSessionSchema);
const SessionEnvelope = envelopeOf(SessionSchema);
const BootstrapEnvelope = envelopeOf(BootstrapResultSchema);
const TransferEnvelope = envelopeOf(SimulatedTransferSchema);

/** Creates a session with a secret key; asserts 201 and the contract shape. */
export async function createSession(
  baseUrl: string,
  secretKey: string,
  overrides: Partial<CreateSessionParams> = {},
  headers: Record<string, string> = {},
) {
  const response = await call(baseUrl, 'POST', '/api/widget/sessions', {
    token: secretKey,
    json: sessionParams(overrides),
    headers,
  });
  expect(response.status, response.text).toBe(201);
  return CreatedEnvelope.parse(response.body).data;
}

export async function retrieveSession(baseUrl: string, secretKey: string, id: string) {
  const response = await call(baseUrl, 'GET', `/api/widget/sessions/${id}`, { token: secretKey });
  expect(response.status, response.text).toBe(200);
  return SessionEnvelope.parse(response.body).data;
}

/** The widget's exchange of the client secret; asserts 200 and returns token, session and account. */
export async function bootstrap(baseUrl: string, clientSecret: string) {
  const response = await call(baseUrl, 'POST', '/api/widget/bootstrap', { json: { clientSecret } });
  expect(response.status, response.text).toBe(200);
  return BootstrapEnvelope.parse(response.body).data;
}

/** Test-mode transfer through `POST /api/test/transfers`; asserts 200. */
export async function testTransfer(
  baseUrl: string,
  secretKey: string,
  accountNumber: string,
  amount: number,
) {
  const response = await call(baseUrl, 'POST', '/api/test/transfers', {
    token: secretKey,
    json: { accountNumber, amount },
  });
  expect(response.status, response.text).toBe(200);
  return TransferEnvelope.parse(response.body).data;
}

/** Create, bootstrap and pay the exact amount; returns the successful session. */
export async function paySession(
  baseUrl: string,
  secretKey: string,
  overrides: Partial<CreateSessionParams> = {},
) {
  const created = await createSession(baseUrl, secretKey, overrides);
  const opened = await bootstrap(baseUrl, created.clientSecret);
  await testTransfer(baseUrl, secretKey, opened.virtualAccount.accountNumber, created.amount);
  return retrieveSession(baseUrl, secretKey, created.id);
}

/** A bank notification as the bank would send it, for one account. */
export function bankNotification(
  accountNumber: string,
  amount: number,
  overrides: Partial<BankNotification['transfer']> & { id?: string; occurredAt?: string } = {},
): BankNotification {
  const { id, occurredAt, ...transfer } = overrides;
  return {
    id: id ?? newId('ntf'),
    type: 'transfer.received',
    occurredAt: occurredAt ?? new Date().toISOString(),
    transfer: {
      id: newId('trf'),
      accountNumber,
      amount,
      currency: 'NGN',
      outcome: 'credited',
      returnReason: null,
      ...transfer,
    },
  };
}

/** POSTs a notification to `/bank/notifications` signed with the server's bank secret (or another). */
export function postNotification(
  server: RunningServer,
  notification: unknown,
  options: { secret?: string; timestampSeconds?: number; nowMs?: number } = {},
) {
  const raw = JSON.stringify(notification);
  const now = options.nowMs ?? Date.now();
  const timestamp = options.timestampSeconds ?? Math.floor(now / 1000);
  const signature = signPayload(raw, [options.secret ?? server.service.config.bank.secret], timestamp);
  return call(server.baseUrl, 'POST', '/bank/notifications', {
    raw,
    headers: { 'content-type': 'application/json', 'x-bank-signature': signature },
  });
}

/** Rows of the events table of one session, by type: the record of every transition. */
export async function eventTypes(server: RunningServer, sessionId: string): Promise<string[]> {
  const rows = await server.rows<{ type: string }>(
    'SELECT type FROM events WHERE session_id = ? ORDER BY seq',
    sessionId,
  );
  return rows.map((row) => row.type);
}

/**
 * Writes `text` as is on a fresh connection and collects what comes back for at most `waitMs`: the answer, and
 * whether the server closed the connection within that time (a test of "at once", where the old answer came
 * only after a timeout of seconds).
 *
 * @example
 * const { answer, closedByServer } = await sendRaw(server.baseUrl, 'HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
 */
export async function sendRaw(
  baseUrl: string,
  text: string,
  waitMs = 1_000,
): Promise<{ answer: string; closedByServer: boolean }> {
  const socket = connect(Number(new URL(baseUrl).port), new URL(baseUrl).hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString();
  });
  const closed = once(socket, 'close').then(() => true);
  socket.write(text);
  const closedByServer = await Promise.race([
    closed,
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs)),
  ]);
  socket.destroy();
  return { answer, closedByServer };
}
