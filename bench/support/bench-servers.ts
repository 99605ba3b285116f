/**
 * The servers a benchmark measures, each started in its own process so the load generator does not share
 * its CPU: `node --import tsx bench/support/bench-servers.ts <kind> [options]`, the kind one of `bare`,
 * `express`, `express-born`, `servicepay` and `create-sql-floor`. Prints one JSON line
 * `{ url, secretKey?, dbPath? }` when ready.
 *
 * `express` is a stock express 5 app (served by `createServer(app)`, as `app.listen` does); `express-born` is the
 * same app served as the service's API server serves its own, with requests and responses born on the app's
 * prototypes (`internal/message-classes.ts`), which spares V8 a hidden class per request.
 *
 * servicepay options: `--db PATH` serves an existing database (seeded by `seed-sessions.ts`; the caller has
 * its keys) instead of a fresh one with one business; `--rate-limit N` sets the secret-key budget per minute
 * (default: high enough never to be reached, so a create benchmark measures creates); `--database-url URL`
 * serves PostgreSQL at URL (the temporary SQLite file then holds only the simulated bank's books) and
 * `--existing` skips creating a business there (a second instance on the same database); `--metrics` records
 * and serves the metrics (issue 28), scraped every second.
 *
 * `create-sql-floor` is the `express` route with the SQLite work of a keyed create and nothing else: the key
 * lookup, the `Idempotency-Key` lookup, and one write-queue job with the session insert (which refuses a used
 * reference itself) and the remembered answer, committed (fsynced) in batches like the service's, through the service's own
 * repositories and schema. Every value is prepared outside the statements (the token's hash, a sealed answer
 * of the real size), so it measures what any create that keeps its database on the request thread must spend
 * beside the framework: the ceiling of `servicepay` as it is built (an express app served as the service
 * serves it, SQLite on the request thread) on this machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type Express } from 'express';
import {
  createBusiness,
  createService,
  createSqliteStore,
  openDatabase,
  silentLogger,
} from '../../reference-server/src/index.ts';
import { messageClassesFor } from '../../reference-server/src/internal/message-classes.ts';
import { newTimeOrderedId, randomBytesFromPool, sha256 } from '../../reference-server/src/internal/random.ts';
import { SecretBox } from '../../reference-server/src/internal/secret-box.ts';
import { newClientSecret } from '../../reference-server/src/sessions/client-secret.ts';
import { scrapeEverySecond } from './metrics-scraper.ts';

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
    clientSecret: 'cs_test_0QzXbT5a0123456789abcdefghijklmnopqrstuv',
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

/**
 * Listens with `app` on a loopback port. `bornWithPrototypes`: with the request and response classes the
 * service's API server uses (`messageClassesFor`), instead of express's own `app.listen`.
 */
async function listen(app: Express, bornWithPrototypes: boolean): Promise<string> {
  const server = bornWithPrototypes ? createServer(messageClassesFor(app), app) : createServer(app);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function expressRoute(bornWithPrototypes: boolean): Promise<string> {
  const app = express();
  app.use(express.json());
  app.post('/api/widget/sessions', (_req, res) => {
    res.status(201).json(SESSION_LIKE);
  });
  return listen(app, bornWithPrototypes);
}

/** A fresh database file in a folder of its own, removed when this process exits. */
function freshDatabasePath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-bench-'));
  process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
  return join(folder, 'bench.db');
}

async function createSqlFloor(): Promise<{ url: string; secretKey: string; dbPath: string }> {
  const dbPath = freshDatabasePath();
  const store = createSqliteStore(openDatabase(dbPath), () => {});
  const { business, keys } = await createBusiness(store, 'Bench Shop', false, Date.now());
  const keyHash = sha256(keys.test.secretKey);
  const scope = `${business.id}:test`;
  const ttlMs = 24 * 3_600_000;
  // What the service remembers for a create: the answer sealed, as long as a real one.
  const sealedAnswer = new SecretBox(randomBytesFromPool(32)).seal(JSON.stringify(SESSION_LIKE));
  const requestHash = sha256('POST /api/widget/sessions');
  const app = express();
  app.use(express.json());
  app.post('/api/widget/sessions', async (req, res) => {
    const body = req.body as { reference: string; amount: number; currency: string };
    const key = req.get('Idempotency-Key') ?? '';
    const now = Date.now();
    if (!(await store.apiKeys.findWithOwner(keyHash))) throw new Error('the bench key is unknown');
    if (await store.idempotencyKeys.find(scope, key, now - ttlMs)) throw new Error('a bench key was reused');
    await store.writes.run(async (tx) => {
      const inserted = await tx.sessions.insert({
        id: newTimeOrderedId('ses', now),
        businessId: business.id,
        environment: 'test',
        reference: body.reference,
        status: 'pending',
        amount: body.amount,
        currency: body.currency,
        payerName: 'Ada Lovelace',
        payerEmail: 'ada@example.com',
        payerPhone: null,
        metadata: {},
        clientSecretHash: newClientSecret('test', now).lookupKey,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + 7_200_000,
      });
      if (!inserted) throw new Error('a bench reference was reused');
      await tx.idempotencyKeys.claim(
        { scope, key, createdAt: now },
        { requestHash, statusCode: 201, responseBody: sealedAnswer },
        now - ttlMs,
      );
    });
    res.status(201).json(SESSION_LIKE);
  });
  // Served as the service's API server serves its app.
  return { url: await listen(app, true), secretKey: keys.test.secretKey, dbPath };
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
  // A fresh database is this process's own: gone when it exits (a seeded one belongs to the caller).
  dbPath ??= freshDatabasePath();
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
      // And so would the connections one address may hold.
      maxConnectionsPerAddress: 1_000_000,
      // `--metrics`: recorded, served on their own port and scraped every second (bench/metrics-cost.ts).
      metricsPort: args.includes('--metrics') ? 0 : null,
    },
    { logger: silentLogger },
  );
  const { url, metricsUrl } = await service.start();
  if (metricsUrl) scrapeEverySecond(metricsUrl);
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
      ? { url: await expressRoute(false) }
      : kind === 'express-born'
        ? { url: await expressRoute(true) }
        : kind === 'servicepay'
          ? await servicepay(args)
          : kind === 'create-sql-floor'
            ? await createSqlFloor()
            : undefined;
if (!ready) {
  console.error(
    'usage: bench-servers.ts bare|express|express-born|servicepay|create-sql-floor [--db PATH] [--rate-limit N]',
  );
  process.exit(2);
}
console.log(JSON.stringify(ready));
