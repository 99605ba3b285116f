import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthenticationError,
  type BalanceTransaction,
  ConnectionError,
  type ExportStream,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
  ServicePay,
  type ServicePayOptions,
  TimeoutError,
} from '@servicepay/node';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  csvRecords,
  failSecondSessionsPage,
  LEDGER_CSV_HEADER,
  ledgerCsvRow,
} from '../support/csv-exports.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { type ProxyPlan, startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

// The SDK's CSV exports against the real reference server (real HTTP on loopback, a real database): the stream
// holds exactly the bytes the service sends, its rows agree with the ledger's list and the balance, errors
// before the first byte are the SDK's typed errors, and a download cut after its first byte (by a real TCP
// proxy that drops the connection, or by the service failing half way) is an `error` event, never a clean end.

const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

let server: RunningServer;
let shop: CreatedBusiness;
let servicepay: ServicePay;
const startedAt = new Date();
const folder = mkdtempSync(join(tmpdir(), 'servicepay-exports-'));

/** What a stream gave before it ended or failed: its bytes, and the error, if any (an `end` never after one). */
function drain(stream: ExportStream): Promise<{ bytes: Buffer; ended: boolean; error?: unknown }> {
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve({ bytes: Buffer.concat(chunks), ended: true }));
    stream.once('error', (error) =>
      resolve({ bytes: Buffer.concat(chunks), ended: stream.readableEnded, error }),
    );
  });
}

/** The export as the service sends it, read with plain fetch: the reference bytes. */
async function served(path: string): Promise<Buffer> {
  const response = await fetch(new URL(path, server.baseUrl), {
    headers: { authorization: `Bearer ${shop.keys.test.secretKey}` },
  });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

const client = (options: ServicePayOptions = {}) =>
  new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl, ...options });

beforeAll(async () => {
  // Pages of 2 rows: every export here crosses pages, and a failure on the second page comes after the first byte.
  server = await startServer({ rateLimit: { perMinute: 10_000 }, exportPageSize: 2 });
  shop = await server.createBusiness({ name: 'Export Shop' });
  await server.createBusiness({ name: 'Other Shop' }).then(async (other) => {
    const theirs = new ServicePay(other.keys.test.secretKey, { baseUrl: server.baseUrl });
    await theirs.testHelpers.pay(
      (await theirs.sessions.create({ amount: 777_000, currency: 'NGN', payer })).id,
    );
    await theirs.close();
  });
  servicepay = client();
  // Four payments, a partial refund, a wrong amount the bank returns (two entries), a session never paid.
  const amounts = [250_000, 40_000, 1_000_000, 5_050];
  const paid: string[] = [];
  for (const amount of amounts) {
    const created = await servicepay.sessions.create({
      amount,
      currency: 'NGN',
      payer: { ...payer, name: `=cmd|${amount}` },
    });
    expect((await servicepay.testHelpers.pay(created.id)).session.status).toBe('successful');
    paid.push(created.id);
  }
  expect((await servicepay.refunds.create(paid[0] as string, { amount: 60_000 })).status).toBe('succeeded');
  const wrong = await servicepay.sessions.create({ amount: 90_000, currency: 'NGN', payer });
  expect((await servicepay.testHelpers.pay(wrong.id, { amount: 89_000 })).session.status).toBe('mismatch');
  await servicepay.sessions.create({ amount: 12_345, currency: 'NGN', payer });
});

afterAll(async () => {
  await servicepay?.close();
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('servicepay.exports against the reference server', () => {
  it.each([
    ['undici', {}],
    ['fetch', { fetch: (url: string, init: RequestInit) => fetch(url, init) }],
  ] as const)(
    'streams the ledger byte for byte, rows agreeing with balanceTransactions.list and the balance (%s)',
    async (_, options) => {
      const sdk = client(options);
      const csv = await sdk.exports.balanceTransactions({ createdFrom: startedAt });
      const got = await drain(csv);
      expect(got).toMatchObject({ ended: true });
      expect(got.error).toBeUndefined();
      expect(
        got.bytes.equals(
          await served(
            `/api/exports/balance-transactions?createdFrom=${encodeURIComponent(startedAt.toISOString())}`,
          ),
        ),
      ).toBe(true);
      expect(csv.filename).toMatch(
        /^servicepay-balance-transactions-test-\d{4}-\d{2}-\d{2}T\d{6}(\d{3})?Z-to-now\.csv$/,
      );

      const ledger: BalanceTransaction[] = [];
      for await (const entry of sdk.balanceTransactions.list({ limit: 100 })) ledger.push(entry);
      const [header, ...rows] = csvRecords(got.bytes);
      expect(header).toEqual(LEDGER_CSV_HEADER);
      // The list is newest first, the export oldest first; the same entries, field for field.
      expect(rows).toEqual(ledger.reverse().map(ledgerCsvRow));
      expect(rows.map((row) => [row[2], Number(row[3])])).toEqual([
        ['payment', 250_000],
        ['payment', 40_000],
        ['payment', 1_000_000],
        ['payment', 5_050],
        ['refund', -60_000],
        ['transfer_received', 89_000],
        ['transfer_return', -89_000],
      ]);
      const net = rows.reduce((sum, row) => sum + Number(row[3]), 0);
      expect(net).toBe(1_235_050);
      const { currencies } = await sdk.balance.retrieve();
      expect(currencies).toEqual([
        { currency: 'NGN', collected: 1_384_050, refunded: 60_000, returned: 89_000, net },
      ]);
      await sdk.close();
    },
  );

  it('streams the sessions, rows agreeing with sessions.list (statuses, amounts, refunded), formulas neutralised', async () => {
    const day = startedAt.toISOString().slice(0, 10);
    const csv = await servicepay.exports.sessions({ createdFrom: day, environment: 'test' });
    expect(csv.filename).toBe(`servicepay-sessions-test-${day}-to-now.csv`);
    const got = await drain(csv);
    expect(got.bytes.equals(await served(`/api/exports/sessions?createdFrom=${day}&environment=test`))).toBe(
      true,
    );
    const rows = csvRecords(got.bytes).slice(1);
    const listed = [];
    for await (const session of servicepay.sessions.list({ limit: 100 })) listed.push(session);
    expect(rows.map((row) => [row[0], row[3], Number(row[4]), Number(row[5])])).toEqual(
      listed
        .reverse()
        .map((session) => [session.id, session.status, session.amount, session.amountRefunded ?? 0]),
    );
    expect(rows.map((row) => row[3])).toEqual([
      'successful',
      'successful',
      'successful',
      'successful',
      'mismatch',
      'pending',
    ]);
    expect(rows[0]?.[7]).toBe("'=cmd|250000");
  });

  it('writes a file with toFile: every byte, and the service name for it', async () => {
    const path = join(folder, 'books.csv');
    const file = await servicepay.exports
      .balanceTransactions({ createdFrom: startedAt.toISOString() })
      .toFile(path);
    const written = readFileSync(path);
    expect(
      written.equals(
        await served(
          `/api/exports/balance-transactions?createdFrom=${encodeURIComponent(startedAt.toISOString())}`,
        ),
      ),
    ).toBe(true);
    expect(file).toMatchObject({ path, bytes: written.length, requestId: expect.stringMatching(/^req_/) });
    expect(file.filename).toMatch(/^servicepay-balance-transactions-test-/);
    expect(existsSync(`${path}.partial`)).toBe(false);
  });

  it('throws the typed errors before the first byte: a bad range 400, another environment 403, a bad key 401', async () => {
    const backwards = servicepay.exports.sessions({ createdFrom: '2026-12-02', createdTo: '2026-12-01' });
    await expect(backwards).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(backwards).rejects.toMatchObject({
      statusCode: 400,
      code: 'validation_failed',
      errors: [expect.objectContaining({ path: 'createdTo' })],
      requestId: expect.stringMatching(/^req_/),
    });
    await expect(
      servicepay.exports.balanceTransactions({ createdFrom: '2026-12-01T00:00:00' }),
    ).rejects.toMatchObject({
      statusCode: 400,
      errors: [expect.objectContaining({ path: 'createdFrom' })],
    });
    await expect(servicepay.exports.balanceTransactions({ environment: 'live' })).rejects.toSatisfy(
      (error) => error instanceof PermissionError && error.code === 'environment_mismatch',
    );
    const revoked = new ServicePay(`sk_test_${'Z'.repeat(32)}`, { baseUrl: server.baseUrl });
    await expect(revoked.exports.sessions()).rejects.toBeInstanceOf(AuthenticationError);
    // toFile creates nothing for an export refused before its first byte.
    const path = join(folder, 'refused.csv');
    await expect(servicepay.exports.sessions({ createdTo: 'tomorrow' }).toFile(path)).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    expect([existsSync(path), existsSync(`${path}.partial`)]).toEqual([false, false]);
  });

  it('a failure of the service after the first byte (its page reader fails on page two, injected) is an error event, not an end', async () => {
    const fault = failSecondSessionsPage(server.service.deps.store.exportPages);
    try {
      const got = await drain(await servicepay.exports.sessions());
      expect(got.ended).toBe(false);
      expect(got.error).toBeInstanceOf(ConnectionError);
      expect(got.error).toMatchObject({ code: 'stream_interrupted', statusCode: 200 });
      // What came is the start of the file: the header and the first page, and no more.
      expect(csvRecords(got.bytes.subarray(0, got.bytes.lastIndexOf('\r\n') + 2))).toHaveLength(3);
      expect(fault.calls()).toBe(2);
    } finally {
      fault.restore();
    }
  });
});

describe('servicepay.exports through a TCP proxy that drops or stalls the connection', () => {
  let whole: Buffer;
  const path = '/api/exports/balance-transactions';
  let proxy: TcpProxy | undefined;
  const through = async (plan: (connection: number) => ProxyPlan, options: ServicePayOptions = {}) => {
    proxy = await startTcpProxy(server.baseUrl, plan);
    return client({ ...options, baseUrl: proxy.url });
  };

  beforeAll(async () => {
    whole = await served(path);
    expect(whole.length).toBeGreaterThan(600);
  });

  afterAll(() => proxy?.close());

  it.each([
    ['undici', {}],
    ['fetch', { fetch: (url: string, init: RequestInit) => fetch(url, init) }],
  ] as const)(
    'a connection cut after 300 bytes of the body: an error event with the bytes before it, and no second request (%s)',
    async (_, options) => {
      const sdk = await through(() => ({ kind: 'cut', bodyBytes: 300 }), options);
      const got = await drain(await sdk.exports.balanceTransactions());
      expect(got.ended).toBe(false);
      expect(got.error).toBeInstanceOf(ConnectionError);
      expect(got.error).toMatchObject({
        code: 'stream_interrupted',
        statusCode: 200,
        requestId: expect.stringMatching(/^req_/),
      });
      expect(got.bytes.length).toBeGreaterThan(0);
      expect(got.bytes.length).toBeLessThan(whole.length);
      expect(got.bytes.equals(whole.subarray(0, got.bytes.length))).toBe(true);
      expect(proxy?.requests).toHaveLength(1);
      // The key went in the Authorization header only, never in the request line (URL).
      expect(proxy?.requests[0]?.split('\r\n')[0]).toBe(`GET ${path} HTTP/1.1`);
      expect(proxy?.requests[0]).toContain(`authorization: Bearer ${shop.keys.test.secretKey}`);
      expect(proxy?.requests[0]).toContain('accept: text/csv');
      expect(proxy?.requests[0]).not.toContain('idempotency-key');
      expect(String((got.error as Error).message)).not.toContain(shop.keys.test.secretKey);
      await sdk.close();
      await proxy?.close();
    },
  );

  it('toFile on a cut connection rejects and leaves no file behind', async () => {
    const sdk = await through(() => ({ kind: 'cut', bodyBytes: 300 }));
    const file = join(folder, 'cut.csv');
    await expect(sdk.exports.balanceTransactions().toFile(file)).rejects.toMatchObject({
      code: 'stream_interrupted',
    });
    expect([existsSync(file), existsSync(`${file}.partial`)]).toEqual([false, false]);
    await sdk.close();
    await proxy?.close();
  });

  it('a connection cut after the headers, before the first byte of the body: retried, and the file arrives whole', async () => {
    const sdk = await through((n) => (n === 0 ? { kind: 'cut', bodyBytes: 0 } : { kind: 'pass' }));
    const got = await drain(await sdk.exports.balanceTransactions());
    expect(got.error).toBeUndefined();
    expect(got.bytes.equals(whole)).toBe(true);
    expect(proxy?.requests.map((head) => /x-servicepay-retry-count: (\d)/.exec(head)?.[1] ?? '0')).toEqual([
      '0',
      '1',
    ]);
    await sdk.close();
    await proxy?.close();
  });

  it('a connection that goes silent: a TimeoutError, emitted mid-body, thrown (after a retry) before the first byte; the signal ends a download', async () => {
    const stalled = await through(() => ({ kind: 'stall', bodyBytes: 300 }), { timeout: 400 });
    const got = await drain(await stalled.exports.balanceTransactions());
    expect(got.ended).toBe(false);
    expect(got.error).toBeInstanceOf(TimeoutError);
    expect(got.error).toMatchObject({ code: 'timeout', statusCode: 200 });
    expect(proxy?.requests).toHaveLength(1);
    // The caller's signal ends a download as it ends a call: the stream fails with its reason.
    const stop = new AbortController();
    const stopped = await stalled.exports.balanceTransactions({}, { signal: stop.signal, timeout: 60_000 });
    const aborted = drain(stopped);
    stop.abort(new Error('the bookkeeper went home'));
    expect((await aborted).error).toBe(stop.signal.reason);
    await stalled.close();
    await proxy?.close();

    // Silent before the first byte of the body: a timeout like any call's, retried, then thrown by the await.
    const silent = await through(() => ({ kind: 'stall', bodyBytes: 0 }), { timeout: 300, maxRetries: 1 });
    await expect(silent.exports.balanceTransactions()).rejects.toSatisfy(
      (error) => error instanceof TimeoutError && error.code === 'timeout',
    );
    expect(proxy?.requests).toHaveLength(2);
    await silent.close();
    await proxy?.close();
  });
});

describe('servicepay.exports and the rate limit', () => {
  it('a 429 before the first byte is a RateLimitError with retryAfter, thrown at once when the wait is long', async () => {
    const limited = await startServer({ rateLimit: { perMinute: 1 } });
    try {
      const business = await limited.createBusiness({ name: 'Busy Shop' });
      const sdk = new ServicePay(business.keys.test.secretKey, { baseUrl: limited.baseUrl });
      expect((await drain(await sdk.exports.sessions())).ended).toBe(true);
      const refused = sdk.exports.sessions();
      await expect(refused).rejects.toBeInstanceOf(RateLimitError);
      await expect(refused).rejects.toMatchObject({
        statusCode: 429,
        code: 'rate_limited',
        retryAfter: expect.any(Number),
      });
      await sdk.close();
    } finally {
      await limited.close();
    }
  });
});
