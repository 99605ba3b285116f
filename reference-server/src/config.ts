import type { LogLevel } from './internal/logger.ts';
import { randomBase62 } from './internal/random.ts';

/** Per-currency bounds on a session amount, in minor units. */
export interface CurrencyBounds {
  minAmount: number;
  maxAmount: number;
}

/** Everything the service can be told at start. Every field has a default; see `defaultConfig`. */
export interface ServerConfig {
  /**
   * SQLite file. `:memory:` is accepted (in-process tests) but keeps nothing past the process, and CLI commands
   * run in another process cannot see it.
   */
  dbPath: string;
  /**
   * `postgres://…`: the service's data, the simulated bank's books included, lives in PostgreSQL instead of
   * `dbPath` (issue 13), and no SQLite file is opened. Null: SQLite at `dbPath`.
   */
  databaseUrl: string | null;
  /**
   * Connections in this instance's PostgreSQL pool (`SERVICEPAY_DATABASE_POOL_SIZE`, default 10): how many
   * write jobs and reads run at once; each instance also holds one more for `LISTEN`.
   */
  databasePoolSize: number;
  /**
   * Production mode (`--production` or `NODE_ENV=production`): the secrets key must come from
   * `SERVICEPAY_SECRETS_KEY` or `secretsKeyFile` outside the database folder, never a file made beside it.
   */
  production: boolean;
  /** The secrets key file; null: `servicepay.secrets-key` beside the database (development only). */
  secretsKeyFile: string | null;
  port: number;
  host: string;
  /**
   * The reverse proxies (load balancers) whose `X-Forwarded-For` is believed, as `parseTrustedProxies` reads
   * `SERVICEPAY_TRUST_PROXY`: addresses, CIDR ranges or `loopback`/`linklocal`/`uniquelocal`. Empty (the
   * default): none, and the per-address limits count by the socket's peer.
   */
  trustedProxies: string[];
  testWidgetPort: number;
  liveWidgetPort: number;
  /**
   * The port of the metrics listener (`GET /metrics`, Prometheus text format), apart from the API's; null (the
   * default): no metrics are served or recorded. 0 picks a free port.
   */
  metricsPort: number | null;
  /** The address the metrics listener binds (default 127.0.0.1): a private interface, never the public one. */
  metricsHost: string;
  /** The lowest level the service logs (`--log-level`, `SERVICEPAY_LOG_LEVEL`; default `info`). */
  logLevel: LogLevel;
  /** Supported currencies and their amount bounds. */
  currencies: Record<string, CurrencyBounds>;
  /** Default lifetime of a session when `expiresInMinutes` is not given. */
  sessionLifetimeMinutes: number;
  /** The countdown the payer sees: how long one virtual account accepts a transfer. */
  accountLifetimeMinutes: number;
  rateLimit: {
    /** Requests per rolling minute per business and environment (spec §8: 150). */
    perMinute: number;
    /** Requests per rolling minute per client address on the unauthenticated widget and bank-counter routes. */
    widgetPerMinutePerAddress: number;
    /** Failed authentications per rolling minute per address before 429, to slow key guessing. */
    failedAuthPerMinutePerAddress: number;
    /**
     * Push streams one widget token may hold open at once (at most 10), counted by each instance for the
     * streams it holds (docs/production.md, "Limits that are not done yet").
     */
    streamsPerWidgetToken: number;
    /** Push streams one client address may hold open at once, across widget tokens; per instance too. */
    streamsPerAddress: number;
    /**
     * Sessions a payment link's page may make per client address in 10 rolling minutes, across every link
     * (issue 36): a payer who retries is never stopped, a script on one address is.
     */
    linkSessionsPerAddress: number;
    /** Sessions one payment link may make in 10 rolling minutes, whoever asks: a link cannot flood its merchant. */
    linkSessionsPerLink: number;
  };
  /**
   * How long a client may take to send its request headers before 408 (slow-header attacks). A whole number of
   * milliseconds from 1, at most `requestTimeoutMs`: anything else is refused at start (`checkTimeouts`).
   */
  headersTimeoutMs: number;
  /** How long a client may take to send its whole request, body included, before 408. */
  requestTimeoutMs: number;
  /** Open connections at most; one more is answered 503 in the envelope and closed. */
  maxConnections: number;
  /**
   * Open connections one client address may hold (an IPv6 client counts by its /64); one more is answered 503
   * in the envelope at once and closed, so that one address cannot take the connections every other client
   * needs. The proxies in `trustedProxies` are exempt: a load balancer is one address carrying every client.
   * Each widget host holds an address to the same number on its own port (its answer is a 503 page).
   */
  maxConnectionsPerAddress: number;
  /**
   * How long a client may take to send its request headers to a widget host before Node's 408 closes the
   * connection (10 s, as the API's `headersTimeoutMs`; Node's own default is 60 s).
   */
  widgetHeadersTimeoutMs: number;
  /**
   * How long a whole request to a widget host may take (15 s): a GET is complete with its headers, so this
   * bounds only a payment link's form (at most 8 KB). At least `widgetHeadersTimeoutMs`: less is refused at
   * start (`checkTimeouts`), as a zero, negative or fractional value of either is.
   */
  widgetRequestTimeoutMs: number;
  /**
   * Open connections each widget host holds in all, every client counted (the trusted proxies too); one more is
   * answered 503 with a short page at once and closed. 2,048 each: both hosts together hold no more than the
   * API's `maxConnections`.
   */
  widgetMaxConnections: number;
  /** Largest JSON body accepted, in bytes. */
  bodyLimitBytes: number;
  /** How long an Idempotency-Key is remembered. */
  idempotencyKeyTtlHours: number;
  /** How often expired accounts and sessions are swept. */
  sweepIntervalMs: number;
  bank: {
    /** Shared by the simulated bank (signer) and the service (verifier) of `X-Bank-Signature`. */
    secret: string;
    name: string;
    /** Clock skew tolerated on bank notifications. */
    signatureToleranceSeconds: number;
    /** Whether the unauthenticated payer counter `POST /bank/transfers` (test accounts only) is open. */
    publicCounter: boolean;
  };
  /**
   * Rows a CSV export reads from the database at a time (issue 37): its memory is about one page, whatever the
   * export's size.
   */
  exportPageSize: number;
  webhooks: {
    /** `standard`: retries over about three days; `fast`: within seconds, for development and tests. */
    schedule: 'standard' | 'fast';
    /**
     * The name servers the registration-time check of a webhook URL asks (`address` or `address:port`); null
     * (the default): the system's, from `/etc/resolv.conf`.
     */
    dnsServers: string[] | null;
    /** How long that check waits for DNS, both address families together, before it refuses the URL. */
    dnsDeadlineMs: number;
  };
}

export type ServerConfigOverrides = Partial<Omit<ServerConfig, 'rateLimit' | 'bank' | 'webhooks'>> & {
  rateLimit?: Partial<ServerConfig['rateLimit']>;
  bank?: Partial<ServerConfig['bank']>;
  webhooks?: Partial<ServerConfig['webhooks']>;
};

export function defaultConfig(): ServerConfig {
  return {
    dbPath: 'data/servicepay.db',
    databaseUrl: null,
    databasePoolSize: poolSizeFromEnvironment(),
    production: false,
    secretsKeyFile: null,
    port: 4242,
    host: '127.0.0.1',
    trustedProxies: [],
    testWidgetPort: 4243,
    liveWidgetPort: 4244,
    metricsPort: null,
    metricsHost: '127.0.0.1',
    logLevel: 'info',
    currencies: {
      NGN: { minAmount: 100, maxAmount: 10_000_000_000 },
      USD: { minAmount: 50, maxAmount: 100_000_000 },
    },
    sessionLifetimeMinutes: 120,
    accountLifetimeMinutes: 30,
    rateLimit: {
      perMinute: 150,
      widgetPerMinutePerAddress: 600,
      failedAuthPerMinutePerAddress: 300,
      streamsPerWidgetToken: 10,
      streamsPerAddress: 100,
      linkSessionsPerAddress: 10,
      linkSessionsPerLink: 60,
    },
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    maxConnections: 4096,
    maxConnectionsPerAddress: 256,
    widgetHeadersTimeoutMs: 10_000,
    widgetRequestTimeoutMs: 15_000,
    widgetMaxConnections: 2048,
    bodyLimitBytes: 64 * 1024,
    idempotencyKeyTtlHours: 24,
    sweepIntervalMs: 1000,
    exportPageSize: 1000,
    bank: {
      // A fresh secret per process (the simulated bank lives in the same process as its verifier), unless
      // SERVICEPAY_BANK_SECRET gives one that several instances share: then a notification one instance's
      // bank signed is accepted by any instance.
      secret: process.env.SERVICEPAY_BANK_SECRET || randomBase62(40),
      name: 'ServicePay Test Bank',
      signatureToleranceSeconds: 300,
      publicCounter: true,
    },
    webhooks: { schedule: 'standard', dnsServers: null, dnsDeadlineMs: 2000 },
  };
}

/**
 * Defaults, then overrides, one level deep for the grouped settings. Timeouts the listeners cannot start with
 * are refused here, before anything is opened (`checkTimeouts`).
 *
 * @example
 * resolveConfig({ headersTimeoutMs: 5_000, requestTimeoutMs: 20_000 }).requestTimeoutMs; // 20000
 */
export function resolveConfig(overrides: ServerConfigOverrides = {}): ServerConfig {
  const base = defaultConfig();
  const { rateLimit, bank, webhooks, ...rest } = overrides;
  const config = {
    ...base,
    ...rest,
    rateLimit: { ...base.rateLimit, ...rateLimit },
    bank: { ...base.bank, ...bank },
    webhooks: { ...base.webhooks, ...webhooks },
  };
  checkTimeouts(config);
  return config;
}

/**
 * The listeners' timeouts in pairs, the header timeout first: the API's, then the widget hosts'. Node counts a
 * request's headers inside the request's own time, so each header timeout is at most its request timeout.
 */
export const TIMEOUT_PAIRS = [
  ['headersTimeoutMs', 'requestTimeoutMs'],
  ['widgetHeadersTimeoutMs', 'widgetRequestTimeoutMs'],
] as const;

/** One of the timeouts `checkTimeouts` refuses at start. */
export type TimeoutSetting = (typeof TIMEOUT_PAIRS)[number][number];

/**
 * A setting the service cannot start with, said in one line that names the setting as it was given.
 *
 * @example
 * try { resolveConfig({ headersTimeoutMs: 0 }); } catch (error) { if (error instanceof ConfigError) console.error(error.message); }
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    /** The setting at fault, named as `checkTimeouts` was told to name it. */
    readonly setting: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Refuses, with a `ConfigError`, timeouts the listeners would not start with or would start with unprotected:
 * each must be a whole number of milliseconds from 1 (Node reads 0 as "never time out", and throws on a negative
 * or fractional one), and each header timeout at most its request timeout (Node throws otherwise, from inside
 * the listener's creation, with a stack naming its own option). `nameOf` says how each setting was given (a
 * flag, an environment variable); by default the `createService` setting's name.
 *
 * @example
 * checkTimeouts({ headersTimeoutMs: 40_000, requestTimeoutMs: 30_000, widgetHeadersTimeoutMs: 10_000, widgetRequestTimeoutMs: 15_000 });
 * // ConfigError: headersTimeoutMs (40000 ms) is longer than requestTimeoutMs (30000 ms): …
 */
export function checkTimeouts(
  values: Pick<ServerConfig, TimeoutSetting>,
  nameOf: (setting: TimeoutSetting) => string = (setting) => setting,
): void {
  for (const setting of TIMEOUT_PAIRS.flat()) {
    const value = values[setting];
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(
        nameOf(setting),
        `${nameOf(setting)} must be a whole number of milliseconds, at least 1 (got ${String(value)})`,
      );
    }
  }
  for (const [headers, request] of TIMEOUT_PAIRS) {
    if (values[headers] > values[request]) {
      throw new ConfigError(
        nameOf(headers),
        `${nameOf(headers)} (${values[headers]} ms) is longer than ${nameOf(request)} (${values[request]} ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout`,
      );
    }
  }
}

function poolSizeFromEnvironment(): number {
  const value = Number(process.env.SERVICEPAY_DATABASE_POOL_SIZE ?? 10);
  return Number.isInteger(value) && value >= 1 && value <= 1000 ? value : 10;
}
