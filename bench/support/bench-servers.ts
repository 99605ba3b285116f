/**
 * The servers a benchmark measures, each started in its own process so the load generator does not share
 * its CPU: `node --import tsx bench/support/bench-servers.ts <bare|express|servicepay> [options]`. Prints one
 * JSON line `{ url, secretKey?, dbPath? }` when ready.
 *
 * servicepay options: `--db PATH` serves an existing database (seeded by `seed-sessions.ts`; the caller has
 * its keys) instead of a fresh one with one business; `--rate-limit N` sets the secret-key budget per minute
 * (default: high enough never to be reached, so a create benchmark measures creates); `--database-url URL`
 * serves PostgreSQL at URL (the temporary SQLite file then holds only the simulated bank's books) and
 * `--existing` skips creating a business there (a second instance on the same database).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createBusiness, createService, silentLogger } from '../../reference-server/src/index.ts';

/** What the baselines answer: the same size and shape as a created session. */
const SESSION_LIKE = {
  meta: { statusCode: 201, message: 'Created' },
  data: {
    id: 'ses_0123456789abcdefghijklmn',
    reference: 'ref_0123456789abcdefghij',
    status: 'pending',
    environment: 'test',
    amount: 500000,
    currency: 'NGN',
    payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    metadata: {},
    virtualAccount: null,
    lastMismatch: null,
    createdAt: '2026-11-21T20:00:00.000Z',
    updatedAt: '2026-11-21T20:00:00.000Z',
    expiresAt: '2026-11-21T22:00:00.000Z',
    paidAt: null,
    clientSecret: 'cs_test_0123456789abcdefghijklmnopqrstuv',
  },
};

async function bare(): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const body = JSON.stringify(SESSION_LIKE);
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function expressRoute(): Promise<string> {
  const app = express();
  app.use(express.json());
  app.post('/api/widget/sessions', (_req, res) => {
    res.status(201).json(SESSION_LIKE);
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function servicepay(args: string[]): Promise<{ url: string; secretKey?: string; dbPath: string }> {
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : args[at + 1];
  };
  const givenDb = option('--db');
  const databaseUrl = option('--database-url') ?? null;
  const existing = givenDb !== undefined || args.includes('--existing');
  let dbPath = givenDb;
  if (!dbPath) {
    const folder = mkdtempSync(join(tmpdir(), 'servicepay-bench-'));
    // The fresh database is this process's own: gone when it exits (a seeded one belongs to the caller).
    process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
    dbPath = join(folder, 'bench.db');
  }
  const service = createService(
    {
      dbPath,
      databaseUrl,
      port: 0,
      testWidgetPort: 0,
      liveWidgetPort: 0,
      rateLimit: {
        perMinute: Number(option('--rate-limit') ?? 1_000_000_000),
        // Every checkout of a bench comes from one loopback address: the per-address budgets would stop it.
        widgetPerMinutePerAddress: 1_000_000_000,
        streamsPerAddress: 1_000_000,
      },
    },
    { logger: silentLogger },
  );
  const { url } = await service.start();
  if (existing) return { url, dbPath };
  const created = await createBusiness(service.deps.store, 'Bench Shop', false, Date.now());
  return { url, secretKey: created.keys.test.secretKey, dbPath };
}

// Exit on SIGINT (how load.ts stops a server) through process.exit, so `--cpu-prof` writes its profile.
process.on('SIGINT', () => process.exit(0));

const [kind, ...args] = process.argv.slice(2);
const ready =
  kind === 'bare'
    ? { url: await bare() }
    : kind === 'express'
      ? { url: await expressRoute() }
      : kind === 'servicepay'
        ? await servicepay(args)
        : undefined;
if (!ready) {
  console.error('usage: bench-servers.ts bare|express|servicepay [--db PATH] [--rate-limit N]');
  process.exit(2);
}
console.log(JSON.stringify(ready));
