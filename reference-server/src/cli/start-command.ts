import { defaultConfig } from '../config.ts';
import { storeLocation } from '../internal/database-url.ts';
import { isLogLevel, LOG_LEVELS, type LogLevel } from '../internal/logger.ts';
import { parseTrustedProxies, TrustedProxiesError } from '../internal/trusted-proxies.ts';
import { createService } from '../service.ts';
import { port } from './command-arguments.ts';
import { CommandFailed, UsageError } from './command-errors.ts';
import { databaseUrl, dbPath, type StoreFlags } from './command-store.ts';
import { type TimeoutFlags, timeouts } from './timeout-flags.ts';

/** The flags `start` reads (each also has an environment variable, named in the usage text). */
export interface StartFlags extends StoreFlags, TimeoutFlags {
  readonly port?: string | undefined;
  readonly 'test-widget-port'?: string | undefined;
  readonly 'live-widget-port'?: string | undefined;
  readonly 'webhook-schedule'?: string | undefined;
  readonly production?: boolean | undefined;
  readonly 'secrets-key-file'?: string | undefined;
  readonly 'trust-proxy'?: string | undefined;
  readonly 'metrics-port'?: string | undefined;
  readonly 'metrics-host'?: string | undefined;
  readonly 'log-level'?: string | undefined;
}

function trustedProxies(values: StartFlags): string[] {
  try {
    return parseTrustedProxies(values['trust-proxy'] ?? process.env.SERVICEPAY_TRUST_PROXY);
  } catch (error) {
    if (error instanceof TrustedProxiesError) throw new UsageError(`--trust-proxy: ${error.message}`);
    throw error;
  }
}

function logLevel(values: StartFlags): LogLevel {
  const level = values['log-level'] ?? process.env.SERVICEPAY_LOG_LEVEL ?? 'info';
  if (!isLogLevel(level)) throw new UsageError(`--log-level is one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

/** The metrics listener's port, or null (off) when neither the flag nor the variable gives one. */
function metricsPort(values: StartFlags): number | null {
  const value = values['metrics-port'] ?? process.env.SERVICEPAY_METRICS_PORT;
  if (value === undefined || value === '') return null;
  return port(value, 0, '--metrics-port');
}

/**
 * `servicepay-server start`: the service with its listeners, until SIGINT or SIGTERM closes it.
 *
 * @example
 * await start({ port: '4242', 'webhook-schedule': 'fast' });
 */
export async function start(values: StartFlags): Promise<void> {
  const defaults = defaultConfig();
  const schedule = values['webhook-schedule'];
  if (schedule !== undefined && schedule !== 'fast' && schedule !== 'standard') {
    throw new UsageError('--webhook-schedule is fast or standard');
  }
  // Read before the service is built, so that a bad timeout is one line here, not Node's stack from a listener.
  const listenerTimeouts = timeouts(values);
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
    ...listenerTimeouts,
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
