import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ServicePay } from '@servicepay/node';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// docs/books-and-exports.md shows the exports with the SDK in a ```ts block, which test/docs/doc-commands.test.ts
// (```sh blocks only) does not run. This runs it: saved as a module in an empty folder, run with Node against a
// real reference server with the key and address the guide's readers have in SERVICEPAY_SECRET_KEY and
// SERVICEPAY_API_URL. One rewrite: '@servicepay/node' is the SDK's source, as every test here runs it.

const run = promisify(execFile);
const guide = readFileSync(join(ROOT, 'docs', 'books-and-exports.md'), 'utf8');
const section = guide.slice(
  guide.indexOf('## The same from your code'),
  guide.indexOf('## The same from the command line'),
);
const snippet = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];

let server: RunningServer;
let shop: CreatedBusiness;
const folder = mkdtempSync(join(tmpdir(), 'servicepay-books-guide-'));

beforeAll(async () => {
  server = await startServer();
  shop = await server.createBusiness({ name: 'Books Shop' });
  const servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl });
  const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };
  const paid = await servicepay.sessions.create({ amount: 250_000, currency: 'NGN', payer });
  await servicepay.testHelpers.pay(paid.id);
  await servicepay.sessions.create({ amount: 40_000, currency: 'NGN', payer });
  await servicepay.close();
});

afterAll(async () => {
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The export as the service sends it, read with plain fetch. */
async function served(path: string): Promise<Buffer> {
  const response = await fetch(new URL(path, server.baseUrl), {
    headers: { authorization: `Bearer ${shop.keys.test.secretKey}` },
  });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

it("the guide's SDK example writes today's two exports, byte for byte what the service sends", async () => {
  expect(snippet).toContain("from '@servicepay/node'");
  const code = (snippet as string).replace(
    "from '@servicepay/node'",
    `from '${join(ROOT, 'sdk/src/index.ts')}'`,
  );
  writeFileSync(join(folder, 'books.mts'), code);
  const { stdout } = await run(process.execPath, ['--import', import.meta.resolve('tsx'), 'books.mts'], {
    cwd: folder,
    timeout: 60_000,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SERVICEPAY_SECRET_KEY: shop.keys.test.secretKey,
      SERVICEPAY_API_URL: server.baseUrl,
    },
  });
  const [filename, bytes] = stdout.trim().split(' ');
  const day = /^servicepay-balance-transactions-test-(\d{4}-\d{2}-\d{2})-to-now\.csv$/.exec(
    filename ?? '',
  )?.[1];
  expect(day, stdout).toBeDefined();
  const books = readFileSync(join(folder, 'today.csv'));
  expect(Number(bytes)).toBe(books.length);
  expect(books.equals(await served(`/api/exports/balance-transactions?createdFrom=${day}`))).toBe(true);
  const sessions = readFileSync(join(folder, 'sessions-today.csv'));
  expect(sessions.equals(await served(`/api/exports/sessions?createdFrom=${day}`))).toBe(true);
  // Made just now: the payment is today's one movement, the two sessions today's sessions.
  const ledger = parse(books, { bom: true }) as string[][];
  expect(ledger.slice(1).map((row) => [row[2], row[3], row[4]])).toEqual([['payment', '250000', 'NGN']]);
  const rows = parse(sessions, { bom: true }) as string[][];
  expect(rows.slice(1).map((row) => [row[3], row[4]])).toEqual([
    ['successful', '250000'],
    ['pending', '40000'],
  ]);
});
