import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, paySession } from '../support/api.ts';
import { type RunningServer, startServer, testDatabaseUrl } from '../support/server.ts';

// `servicepay-server export …` (issue 37) as a real process on the database a running server writes: the same
// bytes as the API's download, a file written whole or not at all, usage mistakes answered with exit code 2.

const BIN = fileURLToPath(new URL('../../reference-server/bin/servicepay-server.js', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'servicepay-export-cli-'));
const dbPath = join(folder, 'servicepay.db');
let server: RunningServer;
let businessId: string;
let key: string;
let store: string[];

type Run = { code: number | null; stdout: Buffer; stderr: string };

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'export', ...args, ...store],
      { timeout: 30_000, encoding: 'buffer', env: { ...process.env, SERVICEPAY_DB: '' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr: stderr.toString('utf8') });
      },
    );
  });
}

/** The API's download of the same export, as bytes. */
async function apiDownload(path: string): Promise<Buffer> {
  const response = await fetch(new URL(path, server.baseUrl), {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

beforeAll(async () => {
  server = await startServer({}, { dbPath });
  const created = await server.createBusiness({ name: 'CLI Export Shop' });
  businessId = created.business.id;
  key = created.keys.test.secretKey;
  for (const name of ['=cmd|"/c calc"!A1', 'Ada Obi', '+1 formula'])
    await createSession(server.baseUrl, key, { payer: { name, email: 'payer@example.com' } });
  // Two payments: two entries in the ledger.
  for (const amount of [5_000, 7_000]) await paySession(server.baseUrl, key, { amount });
  const url = await testDatabaseUrl(dbPath);
  store = ['--db', dbPath, ...(url ? ['--database-url', url] : [])];
});

afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('servicepay-server export', () => {
  it('writes to standard output the very bytes the API downloads, formulas neutralised', async () => {
    const run = await cli(['sessions', '--business', businessId, '--environment', 'test']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.equals(await apiDownload('/api/exports/sessions'))).toBe(true);
    const records: string[][] = parse(run.stdout, { bom: true });
    expect(records.slice(1, 4).map((row) => row[7])).toEqual([
      `'=cmd|"/c calc"!A1`,
      'Ada Obi',
      "'+1 formula",
    ]);
  });

  it('writes --out whole, for a range, and says how many rows', async () => {
    const out = join(folder, 'ledger.csv');
    const today = new Date().toISOString().slice(0, 10);
    const run = await cli([
      'balance-transactions',
      '--business',
      businessId,
      '--environment',
      'test',
      '--from',
      today,
      '--out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(`2 rows written to ${out}\n`);
    expect(
      readFileSync(out).equals(await apiDownload(`/api/exports/balance-transactions?createdFrom=${today}`)),
    ).toBe(true);
    expect(existsSync(`${out}.partial`)).toBe(false);
    const amounts = parse(readFileSync(out), { bom: true })
      .slice(1)
      .map((row: string[]) => Number(row[3]));
    expect(amounts).toEqual([5_000, 7_000]);
  });

  it('answers a usage mistake with exit code 2 and writes no file', async () => {
    const out = join(folder, 'never.csv');
    for (const args of [
      ['payments', '--business', businessId, '--environment', 'test'],
      ['sessions', '--environment', 'test'],
      ['sessions', '--business', businessId, '--environment', 'prod'],
      [
        'sessions',
        '--business',
        businessId,
        '--environment',
        'test',
        '--from',
        '2026-12-02',
        '--to',
        '2026-12-01',
      ],
      ['sessions', '--business', businessId, '--environment', 'test', '--from', 'yesterday'],
      ['sessions', '--business', 'biz_nobody', '--environment', 'test'],
    ]) {
      const run = await cli([...args, '--out', out]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain('servicepay-server export');
      expect(existsSync(out)).toBe(false);
    }
  });
});
