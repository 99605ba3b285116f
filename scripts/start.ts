/**
 * `npm start`: the whole product on its embedded defaults, for a developer's first hour. Builds what is stale,
 * then starts the reference service on `data/servicepay.db` (API, developer portal, both widget hosts) and the
 * example shop (`examples/express-shop`), registers the shop's webhook endpoint, and prints one banner with
 * every URL and the development business's test keys (the business is named after the shop, so the checkout
 * says "Pay Paper & Ink" on the shop of that name). Ctrl-C stops everything within 3 seconds and says so in one
 * line (`npm start: stopped (everything it started is closed).`, exit 0): what has not closed after 2.5 s is
 * named in one line instead (`npm start: forced to stop after 2.5 s; still open: …`) and the exit code is 1, so
 * a stop that hangs is seen, not passed off as a clean one. Two port settings that ask for the same port are
 * refused up front, naming both; a port that is taken is named with the variable that moves it.
 *
 * Settings: the flags and variables of `servicepay-server start` (`--db`/`SERVICEPAY_DB`, `--database-url`/
 * `SERVICEPAY_DATABASE_URL`, `--port`/`SERVICEPAY_PORT`, `--test-widget-port`/`SERVICEPAY_TEST_WIDGET_PORT`,
 * `--live-widget-port`/`SERVICEPAY_LIVE_WIDGET_PORT`, `--webhook-schedule`, `--secrets-key-file`/
 * `SERVICEPAY_SECRETS_KEY_FILE`, `SERVICEPAY_SECRETS_KEY`, `--trust-proxy`/`SERVICEPAY_TRUST_PROXY`, the
 * listeners' four timeouts, `--headers-timeout-ms`/`SERVICEPAY_HEADERS_TIMEOUT_MS` and its siblings), read
 * the same way and passed to the same `createService`, plus `--shop-port`/`SHOP_PORT`; the banner names the
 * database it runs on (the SQLite file, or PostgreSQL without its password). Not `--production`: npm start is
 * the development setup (it keeps the development keys in a file), a deployment runs `servicepay-server start`.
 * Webhooks default to the `fast` schedule here (retries within a minute), because a developer watching a
 * failing handler should not wait an hour for the next attempt; `--webhook-schedule standard` gives the
 * production schedule.
 *
 * Keys are stored only as hashes, so to print them on every start the development keys are also kept in
 * `data/development-keys.json` (owner-only permissions, never committed): a local development convenience,
 * not how a deployed service keeps keys.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import { PortInUseError, SHOP_NAME, type Shop, startShop } from '../examples/express-shop/src/index.ts';
import { UsageError as CliUsageError } from '../reference-server/src/cli/command-errors.ts';
import { TIMEOUT_FLAG_OPTIONS, timeouts } from '../reference-server/src/cli/timeout-flags.ts';
import { createBusiness, createService, silentLogger } from '../reference-server/src/index.ts';
import { isPostgresUrl, storeLocation } from '../reference-server/src/internal/database-url.ts';
import { sha256 } from '../reference-server/src/internal/random.ts';
import {
  parseTrustedProxies,
  TrustedProxiesError,
} from '../reference-server/src/internal/trusted-proxies.ts';
import { buildIfStale } from './build-if-stale.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const HOST = '127.0.0.1';
/** Stop waits this long for a clean close, then exits anyway (the promise is 3 s). */
const STOP_DEADLINE_MS = 2500;
/** Signals closer together than this are one Ctrl-C delivered twice (see `stop`), not a second press. */
const SAME_PRESS_MS = 500;
/** How often this process looks whether the process that started it is still there (see `stopWhenOrphaned`). */
const PARENT_CHECK_MS = 250;

const USAGE = `npm start [-- --db PATH|--database-url URL] [--port N] [--test-widget-port N] [--live-widget-port N]
               [--shop-port N] [--webhook-schedule fast|standard] [--secrets-key-file PATH] [--trust-proxy LIST]
               [--headers-timeout-ms MS] [--request-timeout-ms MS] [--widget-headers-timeout-ms MS]
               [--widget-request-timeout-ms MS] [--no-build]

Environment: SERVICEPAY_DB, SERVICEPAY_DATABASE_URL, SERVICEPAY_PORT, SERVICEPAY_TEST_WIDGET_PORT,
SERVICEPAY_LIVE_WIDGET_PORT, SHOP_PORT, SERVICEPAY_SECRETS_KEY, SERVICEPAY_SECRETS_KEY_FILE, SERVICEPAY_TRUST_PROXY,
SERVICEPAY_HEADERS_TIMEOUT_MS, SERVICEPAY_REQUEST_TIMEOUT_MS, SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS,
SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS, as servicepay-server start reads them. npm start is for development; deploy with servicepay-server start --production.`;

class UsageError extends Error {}

function portSetting(flag: string | undefined, variable: string, fallback: number): number {
  const value = flag ?? process.env[variable];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new UsageError(`${variable} must be a port number (0 picks a free one)`);
  return parsed;
}

function readSettings() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      db: { type: 'string' },
      'database-url': { type: 'string' },
      port: { type: 'string' },
      'test-widget-port': { type: 'string' },
      'live-widget-port': { type: 'string' },
      'shop-port': { type: 'string' },
      'webhook-schedule': { type: 'string' },
      'secrets-key-file': { type: 'string' },
      'trust-proxy': { type: 'string' },
      ...TIMEOUT_FLAG_OPTIONS,
      'no-build': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const schedule = values['webhook-schedule'] ?? 'fast';
  if (schedule !== 'fast' && schedule !== 'standard')
    throw new UsageError('--webhook-schedule is fast or standard');
  const databaseUrl = values['database-url'] ?? process.env.SERVICEPAY_DATABASE_URL ?? null;
  if (databaseUrl !== null && !isPostgresUrl(databaseUrl))
    throw new UsageError('SERVICEPAY_DATABASE_URL (--database-url) is a postgres:// URL');
  let trustedProxies: string[];
  try {
    trustedProxies = parseTrustedProxies(values['trust-proxy'] ?? process.env.SERVICEPAY_TRUST_PROXY);
  } catch (error) {
    if (error instanceof TrustedProxiesError)
      throw new UsageError(`SERVICEPAY_TRUST_PROXY (--trust-proxy): ${error.message}`);
    throw error;
  }
  let listenerTimeouts: ReturnType<typeof timeouts>;
  try {
    listenerTimeouts = timeouts(values);
  } catch (error) {
    if (error instanceof CliUsageError) throw new UsageError(error.message);
    throw error;
  }
  const settings = {
    listenerTimeouts,
    dbPath: values.db ?? process.env.SERVICEPAY_DB ?? 'data/servicepay.db',
    databaseUrl,
    trustedProxies,
    schedule,
    build: !values['no-build'],
    secretsKeyFile: values['secrets-key-file'] ?? process.env.SERVICEPAY_SECRETS_KEY_FILE ?? null,
    ports: {
      SERVICEPAY_PORT: portSetting(values.port, 'SERVICEPAY_PORT', 4242),
      SERVICEPAY_TEST_WIDGET_PORT: portSetting(
        values['test-widget-port'],
        'SERVICEPAY_TEST_WIDGET_PORT',
        4243,
      ),
      SERVICEPAY_LIVE_WIDGET_PORT: portSetting(
        values['live-widget-port'],
        'SERVICEPAY_LIVE_WIDGET_PORT',
        4244,
      ),
      SHOP_PORT: portSetting(values['shop-port'], 'SHOP_PORT', 3000),
    },
  } as const;
  refuseSharedPorts(settings.ports);
  return settings;
}

/** Refuses early, in one line, when a fixed port is taken, naming the variable that moves it. */
async function checkPorts(ports: Record<string, number>): Promise<void> {
  for (const port of Object.values(ports)) {
    if (port === 0) continue;
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, HOST, () => probe.close(() => resolve(true)));
    });
    if (!free) throw new PortInUseError(port);
  }
}

function variableOf(ports: Record<string, number>, port: number): string {
  return Object.entries(ports).find(([, value]) => value === port)?.[0] ?? 'the port settings';
}

/**
 * Refuses two settings that ask for the same fixed port: the second listener would fail with "in use", and the
 * line would name whichever variable came first, maybe not the one that was changed.
 */
function refuseSharedPorts(ports: Record<string, number>): void {
  const seen = new Map<number, string>();
  for (const [variable, port] of Object.entries(ports)) {
    if (port === 0) continue;
    const other = seen.get(port);
    if (other !== undefined)
      throw new UsageError(`${other} and ${variable} both ask for port ${port}: give each its own`);
    seen.set(port, variable);
  }
}

async function developmentBusiness(
  service: ReturnType<typeof createService>,
  keysFile: string,
): Promise<CreatedBusiness> {
  const { store } = service.deps;
  if (existsSync(keysFile)) {
    const saved = JSON.parse(readFileSync(keysFile, 'utf8')) as CreatedBusiness;
    const key = await store.apiKeys.findByHash(sha256(saved.keys.test.secretKey));
    if (key && key.revokedAt === null) return saved;
  }
  // The shop's own name, which the checkout shows the payer: a data folder made before keeps the name it has.
  const created = await createBusiness(store, SHOP_NAME, false, Date.now());
  writeFileSync(keysFile, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  return created;
}

/** What the forced-stop line calls the two things npm start runs. */
const SERVICE = 'the service (API, portal, widget hosts)';
const SHOP = 'the example shop';

/** The ports asked for, to name the variable when one is taken. */
let askedPorts: Record<string, number> = {};

async function main(): Promise<void> {
  const settings = readSettings();
  const { ports } = settings;
  askedPorts = ports;
  if (settings.build) buildIfStale(ROOT, ['sdk', 'widget'], (line) => console.log(line));
  await checkPorts(ports);

  const service = createService(
    {
      dbPath: settings.dbPath,
      host: HOST,
      port: ports.SERVICEPAY_PORT,
      testWidgetPort: ports.SERVICEPAY_TEST_WIDGET_PORT,
      liveWidgetPort: ports.SERVICEPAY_LIVE_WIDGET_PORT,
      databaseUrl: settings.databaseUrl,
      trustedProxies: settings.trustedProxies,
      webhooks: { schedule: settings.schedule },
      secretsKeyFile: settings.secretsKeyFile,
      ...settings.listenerTimeouts,
    },
    // The banner and the shop's lines are what a developer reads; the service's JSON request log is not.
    { logger: silentLogger },
  );
  let shop: Shop | undefined;
  /** What this process started and has not closed yet, by the name the forced-stop line gives it. */
  const open = new Set<string>([SERVICE]);
  const forced = (why: string) => {
    console.error(`npm start: ${why}; still open: ${[...open].join(', ')}`);
    process.exit(1);
  };
  let stoppingSince: number | undefined;
  const stop = () => {
    if (stoppingSince !== undefined) {
      // One Ctrl-C may reach this process twice, a few milliseconds apart: from the terminal, to the whole
      // process group, and passed on by whatever started it. A second press, later: now, saying what is left
      // behind.
      if (performance.now() - stoppingSince >= SAME_PRESS_MS)
        forced('stopped again before everything closed');
      return;
    }
    stoppingSince = performance.now();
    setTimeout(() => forced(`forced to stop after ${STOP_DEADLINE_MS / 1000} s`), STOP_DEADLINE_MS).unref();
    (async () => {
      // The shop first: it calls the service, so the service outlives it.
      if (shop) {
        await shop.close();
        open.delete(SHOP);
      }
      await service.close();
      open.delete(SERVICE);
    })().then(
      () => {
        console.log('npm start: stopped (everything it started is closed).');
        process.exit(0);
      },
      (error: unknown) =>
        forced(`stopping failed (${error instanceof Error ? error.message : String(error)})`),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  stopWhenOrphaned(() => {
    if (stoppingSince === undefined) stop();
  });

  let started: Awaited<ReturnType<typeof service.start>>;
  try {
    started = await service.start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const port = (error as { port?: number }).port;
    if (code === 'EADDRINUSE' && port !== undefined) throw new PortInUseError(port);
    throw error;
  }
  const { url, widgetUrls } = started;
  // After start: on PostgreSQL, start is what migrates the database. The development keys and the shop's orders
  // are kept beside the SQLite file's place, on PostgreSQL too.
  mkdirSync(dirname(settings.dbPath), { recursive: true });
  const business = await developmentBusiness(
    service,
    join(dirname(settings.dbPath), 'development-keys.json'),
  );
  shop = await startShop({
    secretKey: business.keys.test.secretKey,
    apiUrl: url,
    widgetScriptUrl: `${widgetUrls.test}/latest/widget.js`,
    dbPath: join(dirname(settings.dbPath), 'shop.db'),
    port: ports.SHOP_PORT,
    host: HOST,
    log: (line) => console.log(`[shop] ${line}`),
  });
  open.add(SHOP);

  console.log(`
ServicePay is running (database ${storeLocation(settings)}, webhooks on the ${settings.schedule} schedule)

  API                ${url}
  Developer portal   ${url}/portal
  Test widget host   ${widgetUrls.test}/latest/widget.js
  Live widget host   ${widgetUrls.live}/latest/widget.js
  Example shop       ${shop.url}

Development business ${business.business.name} (${business.business.id}), test keys:
  secret key         ${business.keys.test.secretKey}
  publishable key    ${business.keys.test.publishableKey}

Open the shop, press "Pay by bank transfer", then pay the account it shows from the portal's Test bank
(or: npx servicepay-server transfer --api ${url} --account <number> --amount <minor units>).
Guides: docs/quick-start.md. Press Ctrl+C to stop.`);
}

main().catch((error: unknown) => {
  if (error instanceof PortInUseError) {
    console.error(
      `Port ${error.port} is in use (another npm start?): stop it, or set ${variableOf(askedPorts, error.port)} to another port.`,
    );
  } else if (
    error instanceof UsageError ||
    (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
  ) {
    console.error(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  } else {
    console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});

/**
 * Calls `stop` once the process that started this one is gone. npm runs the `start` script through a shell
 * (`sh` on Linux and macOS, `cmd.exe` on Windows) and passes a signal sent to npm alone (a process manager,
 * `timeout`, `kill <npm pid>`) to that shell, not to node: the shell dies and node would live on without it,
 * holding every port. An `exec` in the script made node npm's own child instead, but `cmd.exe` has no `exec`, so
 * `npm start` did not run on Windows at all. When the parent goes away, this process is re-parented on POSIX
 * (its `ppid` changes); on Windows the old parent no longer answers signal 0.
 */
function stopWhenOrphaned(stop: () => void): void {
  const parent = process.ppid;
  const parentGone = () => {
    if (process.ppid !== parent) return true;
    try {
      process.kill(parent, 0);
      return false;
    } catch (error) {
      // EPERM: it exists, owned by someone else.
      return (error as NodeJS.ErrnoException).code !== 'EPERM';
    }
  };
  const timer = setInterval(() => {
    if (!parentGone()) return;
    clearInterval(timer);
    stop();
  }, PARENT_CHECK_MS);
  timer.unref();
}
