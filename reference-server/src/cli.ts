import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { EnvironmentSchema, KeyKindSchema } from '@servicepay/node/protocol';
import { approveKyc, createBusiness, rollKey } from './businesses/onboarding.ts';
import { defaultConfig } from './config.ts';
import { openBackend } from './db/backend.ts';
import type { Store } from './db/store.ts';
import { isPostgresUrl, redactDatabaseUrl, storeLocation } from './internal/database-url.ts';
import { isLogLevel, LOG_LEVELS, type LogLevel, silentLogger } from './internal/logger.ts';
import { parseTrustedProxies, TrustedProxiesError } from './internal/trusted-proxies.ts';
import { listAudit, listCredits, listRefunds } from './operator-lists.ts';
import { PAYMENT_LINKS_USAGE, paymentLinksCli } from './payment-links-cli.ts';
import { createService } from './service.ts';

const USAGE = `servicepay-server: the ServicePay reference service

  servicepay-server start [--db PATH|--database-url URL] [--port N] [--test-widget-port N] [--live-widget-port N] [--webhook-schedule fast]
                         [--production] [--secrets-key-file PATH] [--trust-proxy LIST]
                         [--metrics-port N] [--metrics-host ADDRESS] [--log-level info|warn|error|silent]
  servicepay-server business create --name NAME [--kyc-approved] [--db PATH|--database-url URL] [--json]
  servicepay-server keys roll --business ID --environment test|live --kind secret|publishable [--db PATH|--database-url URL] [--json]
  servicepay-server kyc approve --business ID [--db PATH|--database-url URL]
  servicepay-server transfer --account NUMBER --amount MINOR_UNITS [--api URL]   (test accounts only)
  servicepay-server credits list [--business ID] [--limit N] [--db PATH|--database-url URL] [--json]
  servicepay-server audit list [--business ID] [--limit N] [--db PATH|--database-url URL] [--json]
  servicepay-server refunds list [--business ID] [--session ID] [--limit N] [--db PATH|--database-url URL] [--json]
${PAYMENT_LINKS_USAGE}

--database-url postgres://… (or SERVICEPAY_DATABASE_URL) keeps the service's data, and the simulated bank's
books, in PostgreSQL; several instances may share it, and no SQLite file is opened.

Environment: SERVICEPAY_DB, SERVICEPAY_DATABASE_URL, SERVICEPAY_DATABASE_POOL_SIZE (10), SERVICEPAY_BANK_SECRET,
SERVICEPAY_PORT, SERVICEPAY_TEST_WIDGET_PORT, SERVICEPAY_LIVE_WIDGET_PORT, SERVICEPAY_SECRETS_KEY,
SERVICEPAY_SECRETS_KEY_FILE, SERVICEPAY_TRUST_PROXY, SERVICEPAY_METRICS_PORT, SERVICEPAY_METRICS_HOST,
SERVICEPAY_LOG_LEVEL, NODE_ENV=production (as --production).
--metrics-port (or SERVICEPAY_METRICS_PORT) serves GET /metrics (Prometheus) on its own listener, bound to
--metrics-host (127.0.0.1 by default), never on the API's port; without it no metrics are served.
--trust-proxy (or SERVICEPAY_TRUST_PROXY) lists the load balancers whose X-Forwarded-For is believed:
addresses, CIDR ranges, loopback, linklocal, uniquelocal (none by default).
transfer calls --api, else SERVICEPAY_API_URL, else http://127.0.0.1:SERVICEPAY_PORT (4242: where npm start listens).
In production the secrets key is SERVICEPAY_SECRETS_KEY or a key file outside the database folder.`;

class UsageError extends Error {}
/** A failure that is not a usage mistake: printed as its one-line message, exit code 1. */
class CommandFailed extends Error {}

const OPTIONS = {
  db: { type: 'string' },
  'database-url': { type: 'string' },
  port: { type: 'string' },
  'test-widget-port': { type: 'string' },
  'live-widget-port': { type: 'string' },
  'webhook-schedule': { type: 'string' },
  production: { type: 'boolean' },
  'secrets-key-file': { type: 'string' },
  'trust-proxy': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  'log-level': { type: 'string' },
  name: { type: 'string' },
  'kyc-approved': { type: 'boolean' },
  json: { type: 'boolean' },
  business: { type: 'string' },
  environment: { type: 'string' },
  kind: { type: 'string' },
  account: { type: 'string' },
  amount: { type: 'string' },
  api: { type: 'string' },
  limit: { type: 'string' },
  session: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(
  values: Values,
  name: 'name' | 'business' | 'environment' | 'kind' | 'account' | 'amount',
): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new UsageError(`${name} must be a port number`);
  return parsed;
}

/** Who runs this command, for the audit log: the operating-system user. */
function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return `cli:${process.env.USER ?? 'unknown'}`;
  }
}

function limit(values: Values): number {
  if (values.limit === undefined) return 1000;
  const parsed = Number(values.limit);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 100_000)
    throw new UsageError('--limit is a whole number from 1 to 100000');
  return parsed;
}

const dbPath = (values: Values) => values.db ?? process.env.SERVICEPAY_DB ?? defaultConfig().dbPath;

const databaseUrl = (values: Values) => values['database-url'] ?? process.env.SERVICEPAY_DATABASE_URL ?? null;

/** The store a command works on, and how to let go of it. */
async function openStore(values: Values): Promise<{ store: Store; close(): Promise<void> }> {
  const url = databaseUrl(values);
  if (url !== null && !isPostgresUrl(url)) throw new UsageError('--database-url is a postgres:// URL');
  const backend = openBackend(
    { dbPath: dbPath(values), databaseUrl: url },
    { logger: silentLogger, onEffectError: () => undefined, forCommand: true },
  );
  try {
    await backend.start();
  } catch (error) {
    await backend.close();
    throw new CommandFailed(
      `cannot use the database at ${url === null ? dbPath(values) : redactDatabaseUrl(url)}: ${(error as Error).message}`,
    );
  }
  return { store: backend.store, close: () => backend.close() };
}

/** For commands that only read: a mistyped path must not answer "nothing found" from a new, empty file. */
function openExistingStore(values: Values) {
  const path = dbPath(values);
  if (databaseUrl(values) === null && !existsSync(path)) throw new UsageError(`no database at ${path}`);
  return openStore(values);
}

function trustedProxies(values: Values): string[] {
  try {
    return parseTrustedProxies(values['trust-proxy'] ?? process.env.SERVICEPAY_TRUST_PROXY);
  } catch (error) {
    if (error instanceof TrustedProxiesError) throw new UsageError(`--trust-proxy: ${error.message}`);
    throw error;
  }
}

function logLevel(values: Values): LogLevel {
  const level = values['log-level'] ?? process.env.SERVICEPAY_LOG_LEVEL ?? 'info';
  if (!isLogLevel(level)) throw new UsageError(`--log-level is one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

/** The metrics listener's port, or null (off) when neither the flag nor the variable gives one. */
function metricsPort(values: Values): number | null {
  const value = values['metrics-port'] ?? process.env.SERVICEPAY_METRICS_PORT;
  if (value === undefined || value === '') return null;
  return port(value, 0, '--metrics-port');
}

async function start(values: Values): Promise<void> {
  const defaults = defaultConfig();
  const schedule = values['webhook-schedule'];
  if (schedule !== undefined && schedule !== 'fast' && schedule !== 'standard') {
    throw new UsageError('--webhook-schedule is fast or standard');
  }
  const service = createService({
    dbPath: dbPath(values),
    databaseUrl: databaseUrl(values),
    port: port(values.port ?? process.env.SERVICEPAY_PORT, defaults.port, '--port'),
    testWidgetPort: port(
      values['test-widget-port'] ?? process.env.SERVICEPAY_TEST_WIDGET_PORT,
      defaults.testWidgetPort,
      '--test-widget-port',
    ),
    liveWidgetPort: port(
      values['live-widget-port'] ?? process.env.SERVICEPAY_LIVE_WIDGET_PORT,
      defaults.liveWidgetPort,
      '--live-widget-port',
    ),
    webhooks: { schedule: schedule ?? 'standard' },
    production: values.production === true || process.env.NODE_ENV === 'production',
    secretsKeyFile: values['secrets-key-file'] ?? process.env.SERVICEPAY_SECRETS_KEY_FILE ?? null,
    trustedProxies: trustedProxies(values),
    metricsPort: metricsPort(values),
    metricsHost: values['metrics-host'] ?? process.env.SERVICEPAY_METRICS_HOST ?? defaults.metricsHost,
    logLevel: logLevel(values),
  });
  let started: Awaited<ReturnType<typeof service.start>>;
  try {
    started = await service.start();
  } catch (error) {
    await service.close().catch(() => undefined);
    const { code, port: taken } = error as { code?: string; port?: number };
    if (code !== 'EADDRINUSE' || taken === undefined) throw error;
    const setting =
      taken === service.config.testWidgetPort
        ? '--test-widget-port or SERVICEPAY_TEST_WIDGET_PORT'
        : taken === service.config.liveWidgetPort
          ? '--live-widget-port or SERVICEPAY_LIVE_WIDGET_PORT'
          : taken === service.config.metricsPort
            ? '--metrics-port or SERVICEPAY_METRICS_PORT'
            : '--port or SERVICEPAY_PORT';
    throw new CommandFailed(`Port ${taken} is in use (another server?): stop it, or set ${setting}.`);
  }
  const { url, widgetUrls, metricsUrl } = started;
  const stop = () => {
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(
    `ServicePay API listening on ${url} (database ${storeLocation(service.config)}); widget hosts: test ${widgetUrls.test}, production ${widgetUrls.live}${metricsUrl ? `; metrics: ${metricsUrl}` : ''}`,
  );
}

/** How long `transfer` waits for the service (the bank's notification included) before giving up. */
const TRANSFER_TIMEOUT_MS = 30_000;

/**
 * The API `transfer` calls, and where that choice came from (named when it cannot connect): `--api`, else
 * `SERVICEPAY_API_URL`, else `SERVICEPAY_PORT` on 127.0.0.1, else 127.0.0.1:4242, where `npm start` and
 * `servicepay-server start` listen by default.
 */
function transferApi(values: Values): { url: URL; from: string } {
  const candidates: Array<[string | undefined, string]> = [
    [values.api, '--api'],
    [process.env.SERVICEPAY_API_URL, 'SERVICEPAY_API_URL'],
  ];
  for (const [value, from] of candidates) {
    if (value === undefined || value === '') continue;
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      throw new UsageError(`${from} must be an http(s) URL such as http://127.0.0.1:4242`);
    return { url: new URL(value), from };
  }
  const envPort = process.env.SERVICEPAY_PORT;
  const chosen = port(envPort, defaultConfig().port, 'SERVICEPAY_PORT');
  return {
    url: new URL(`http://127.0.0.1:${chosen}`),
    from: envPort ? 'SERVICEPAY_PORT' : 'the default port',
  };
}

/** The low-level reason a request never got an answer (`ECONNREFUSED`, `ENOTFOUND`, a timeout...). */
function connectionReason(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${TRANSFER_TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}

async function transfer(values: Values): Promise<void> {
  const amount = Number(required(values, 'amount'));
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new UsageError('--amount is a positive whole number of minor units');
  const accountNumber = required(values, 'account');
  const api = transferApi(values);
  const target = new URL('bank/transfers', api.url.href.endsWith('/') ? api.url : `${api.url.href}/`);
  let response: Response;
  try {
    response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountNumber, amount }),
      signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS),
    });
  } catch (error) {
    throw new CommandFailed(
      `Could not reach the ServicePay API at ${api.url.origin} (${connectionReason(error)}; from ${api.from}): start it with npm start, or point at the running one with --api URL or SERVICEPAY_API_URL (or SERVICEPAY_PORT).`,
    );
  }
  let body: { meta?: { message?: string; code?: string }; data?: unknown } | undefined;
  try {
    body = (await response.json()) as typeof body;
  } catch {
    body = undefined;
  }
  if (!body?.meta) {
    throw new CommandFailed(
      `${api.url.origin} answered ${response.status} without a ServicePay envelope: is it the ServicePay API? Set --api URL or SERVICEPAY_API_URL.`,
    );
  }
  if (!response.ok) {
    throw new CommandFailed(
      `Transfer refused (${response.status} ${body.meta.code ?? 'no code'}): ${body.meta.message ?? 'no message'}`,
    );
  }
  console.log(JSON.stringify(body.data, null, 2));
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const command = positionals.join(' ');
  if (values.help || command === '') {
    console.log(USAGE);
    return;
  }
  switch (command) {
    case 'start':
      return start(values);
    case 'business create': {
      const { store, close } = await openStore(values);
      const created = await createBusiness(
        store,
        required(values, 'name'),
        values['kyc-approved'] ?? false,
        Date.now(),
      );
      await close();
      if (values.json) console.log(JSON.stringify(created));
      else {
        console.log(`Business ${created.business.id} (${created.business.name}). Keys, shown this once:`);
        for (const environment of ['test', 'live'] as const) {
          console.log(
            `  ${environment}: ${created.keys[environment].secretKey}  ${created.keys[environment].publishableKey}`,
          );
        }
      }
      return;
    }
    case 'keys roll': {
      const environment = EnvironmentSchema.safeParse(required(values, 'environment'));
      const kind = KeyKindSchema.safeParse(required(values, 'kind'));
      if (!environment.success) throw new UsageError('--environment is test or live');
      if (!kind.success) throw new UsageError('--kind is secret or publishable');
      const { store, close } = await openStore(values);
      const rolled = await rollKey(
        store,
        required(values, 'business'),
        environment.data,
        kind.data,
        Date.now(),
        cliActor(),
      );
      await close();
      if (!rolled) throw new UsageError(`no business ${values.business}`);
      console.log(
        values.json
          ? JSON.stringify(rolled)
          : `New key (shown once): ${rolled.key}; revoked: ${rolled.revokedKeyHint}`,
      );
      return;
    }
    case 'kyc approve': {
      const { store, close } = await openStore(values);
      const approved = await approveKyc(store, required(values, 'business'), Date.now(), cliActor());
      await close();
      if (!approved) throw new UsageError(`no business ${values.business}`);
      console.log(`KYC approved for ${values.business}: its live keys now work.`);
      return;
    }
    case 'transfer':
      return transfer(values);
    case 'credits list':
    case 'audit list':
    case 'refunds list': {
      const list = { 'credits list': listCredits, 'audit list': listAudit, 'refunds list': listRefunds }[
        command
      ];
      const { store, close } = await openExistingStore(values);
      try {
        const output = await list(store, {
          businessId: values.business,
          sessionId: values.session,
          limit: limit(values),
          json: values.json ?? false,
        });
        console.log(output);
      } finally {
        await close();
      }
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * Runs one `servicepay-server` command and resolves with its exit code: 0 done (for `start`, listening), 2 a
 * usage mistake (printed with the usage text), 1 any other failure (one line on stderr). It never exits the
 * process, so a test can call it in-process; `bin/servicepay-server.js` calls it.
 *
 * @example
 * import { main } from './cli.ts';
 * process.exitCode = await main(['transfer', '--account', '1000000000', '--amount', '500000']);
 */
export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'links') return paymentLinksCli(argv.slice(1));
  try {
    await run(argv);
    return 0;
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
}
