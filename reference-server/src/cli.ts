import { parseArgs } from 'node:util';
import { UsageError } from './cli/command-errors.ts';
import { start } from './cli/start-command.ts';
import { businessCreate, keysRoll, kycApprove, list } from './cli/store-commands.ts';
import { TIMEOUT_FLAG_OPTIONS } from './cli/timeout-flags.ts';
import { transfer } from './cli/transfer-command.ts';
import { EXPORT_USAGE, runExportCommand } from './export-command.ts';
import { PAYMENT_LINKS_USAGE, paymentLinksCli } from './payment-links-cli.ts';

// The command line: the usage text, the flags, and which command runs. Each command group is a module of
// `cli/` (the service, the store's operator commands, the test transfer); a new command is a line in the
// switch below and a function there.

const USAGE = `servicepay-server: the ServicePay reference service

  servicepay-server start [--db PATH|--database-url URL] [--port N] [--test-widget-port N] [--live-widget-port N] [--webhook-schedule fast]
                         [--production] [--secrets-key-file PATH] [--trust-proxy LIST]
                         [--metrics-port N] [--metrics-host ADDRESS] [--log-level info|warn|error|silent]
                         [--headers-timeout-ms N] [--request-timeout-ms N] [--widget-headers-timeout-ms N] [--widget-request-timeout-ms N]
  servicepay-server business create --name NAME [--kyc-approved] [--db PATH|--database-url URL] [--json]
  servicepay-server keys roll --business ID --environment test|live --kind secret|publishable [--db PATH|--database-url URL] [--json]
  servicepay-server kyc approve --business ID [--db PATH|--database-url URL]
  servicepay-server transfer --account NUMBER --amount MINOR_UNITS [--api URL]   (test accounts only)
  servicepay-server credits list [--business ID] [--limit N] [--db PATH|--database-url URL] [--json]
  servicepay-server audit list [--business ID] [--limit N] [--db PATH|--database-url URL] [--json]
  servicepay-server refunds list [--business ID] [--session ID] [--limit N] [--db PATH|--database-url URL] [--json]
${PAYMENT_LINKS_USAGE}
  ${EXPORT_USAGE}

--database-url postgres://… (or SERVICEPAY_DATABASE_URL) keeps the service's data, and the simulated bank's
books, in PostgreSQL; several instances may share it, and no SQLite file is opened.

Environment: SERVICEPAY_DB, SERVICEPAY_DATABASE_URL, SERVICEPAY_DATABASE_POOL_SIZE (10), SERVICEPAY_BANK_SECRET,
SERVICEPAY_PORT, SERVICEPAY_TEST_WIDGET_PORT, SERVICEPAY_LIVE_WIDGET_PORT, SERVICEPAY_SECRETS_KEY,
SERVICEPAY_SECRETS_KEY_FILE, SERVICEPAY_TRUST_PROXY, SERVICEPAY_METRICS_PORT, SERVICEPAY_METRICS_HOST,
SERVICEPAY_LOG_LEVEL, SERVICEPAY_HEADERS_TIMEOUT_MS, SERVICEPAY_REQUEST_TIMEOUT_MS, SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS,
SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS, NODE_ENV=production (as --production).
--headers-timeout-ms (10000) and --request-timeout-ms (30000) bound how long a client may take to send a request's
headers and the whole request to the API; --widget-headers-timeout-ms (10000) and --widget-request-timeout-ms (15000)
the same on the widget hosts. Whole milliseconds from 1, each header timeout at most its request timeout.
--metrics-port (or SERVICEPAY_METRICS_PORT) serves GET /metrics (Prometheus) on its own listener, bound to
--metrics-host (127.0.0.1 by default), never on the API's port; without it no metrics are served.
--trust-proxy (or SERVICEPAY_TRUST_PROXY) lists the load balancers whose X-Forwarded-For is believed:
addresses, CIDR ranges, loopback, linklocal, uniquelocal (none by default).
transfer calls --api, else SERVICEPAY_API_URL, else http://127.0.0.1:SERVICEPAY_PORT (4242: where npm start listens).
In production the secrets key is SERVICEPAY_SECRETS_KEY or a key file outside the database folder.`;

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
  ...TIMEOUT_FLAG_OPTIONS,
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
    case 'business create':
      return businessCreate(values);
    case 'keys roll':
      return keysRoll(values);
    case 'kyc approve':
      return kycApprove(values);
    case 'transfer':
      return transfer(values);
    case 'credits list':
    case 'audit list':
    case 'refunds list':
      return list(command, values);
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
  if (argv[0] === 'export') return runExportCommand(argv.slice(1));
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
