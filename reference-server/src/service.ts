import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiServer } from './api-server.ts';
import { type AppDeps, createApp } from './app.ts';
import { BankNotificationProcessor } from './bank/notification-processor.ts';
import { SimulatedBank } from './bank/simulated-bank.ts';
import { UnappliedCredits } from './bank/unapplied-credits.ts';
import { resolveConfig, type ServerConfig, type ServerConfigOverrides } from './config.ts';
import { type Backend, openBackend } from './db/backend.ts';
import type { BankBooks } from './db/bank-books.ts';
import type { SqliteDatabase } from './db/database.ts';
import { StorageHealth } from './db/storage-health.ts';
import type { Store } from './db/store.ts';
import { WebhookOutbox } from './events/outbox.ts';
import { PushStreams } from './events/push-streams.ts';
import { RETRY_SCHEDULES, retrySpanMs } from './events/retry-schedule.ts';
import { dnsResolver } from './events/webhook-url-policy.ts';
import { Webhooks } from './events/webhooks.ts';
import { hostedPages } from './hosted-pages/hosted-pages.ts';
import { LinkFormTokens } from './hosted-pages/link-form-token.ts';
import { LinkSubmissions } from './hosted-pages/link-submissions.ts';
import { type Clock, systemClock } from './internal/clock.ts';
import { createJsonLogger, type Logger } from './internal/logger.ts';
import { SecretBox } from './internal/secret-box.ts';
import { loadSecretsKey } from './internal/secrets-key.ts';
import { trustedProxyMatcher } from './internal/trusted-proxies.ts';
import { BalanceService } from './ledger/balance-service.ts';
import { observeService, startRecording, stopRecording, timedWrites } from './metrics/metrics.ts';
import { listenForMetrics } from './metrics/metrics-server.ts';
import { refuseOverBudgetEarly } from './middleware/over-budget.ts';
import { RequestLog } from './middleware/request-log.ts';
import { PaymentLinkService } from './payment-links/payment-link-service.ts';
import { portalRoutes } from './portal/portal-routes.ts';
import { RefundPayouts } from './refunds/refund-payouts.ts';
import { RefundService } from './refunds/refund-service.ts';
import { ExpirySweeper } from './sessions/expiry-sweeper.ts';
import { SessionExpiry } from './sessions/session-expiry.ts';
import { SessionLifecycle } from './sessions/session-lifecycle.ts';
import { SessionService } from './sessions/session-service.ts';
import { TestEndings } from './sessions/test-endings.ts';
import { hostedCheckoutUrl, paymentLinkUrl } from './widget-hosts/hosted-paths.ts';
import { WidgetHosts, type WidgetUrls } from './widget-hosts/widget-hosts.ts';

export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
}

/** A background part of the service started and stopped with it (sweeper, bank retries, webhook worker). */
export interface BackgroundTask {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export interface Service {
  config: ServerConfig;
  deps: AppDeps;
  /**
   * The SQLite file's handle, for what reads it directly: the tests, the benches. On PostgreSQL there is none
   * (no file is opened): reading it throws.
   */
  readonly db: SqliteDatabase;
  /** The simulated bank's books (in the SQLite file, or in PostgreSQL), for a second bank over the same books. */
  readonly bankBooks: BankBooks;
  /** What the service runs on (`db/backend.ts`): its store, books, broadcaster, limiters, migration. */
  readonly backend: Backend;
  secretBox: SecretBox;
  outbox: WebhookOutbox;
  sweeper: ExpirySweeper;
  /** Background parts; add to it before `start`. */
  tasks: BackgroundTask[];
  /**
   * Listens on `config.host:config.port`, the test widget host on `config.testWidgetPort` and the production
   * one on `config.liveWidgetPort` (0 picks a free port), and starts the background parts. `widgetUrls` are the
   * hosts' base URLs: the script is at `${widgetUrls.test}/latest/widget.js`. With `config.metricsPort` set,
   * `GET /metrics` listens on `config.metricsHost:config.metricsPort` (`metricsUrl`), apart from the API.
   */
  start(): Promise<{ url: string; server: Server; widgetUrls: WidgetUrls; metricsUrl: string | undefined }>;
  /** Stops accepting, ends open streams, stops background work, closes the database. */
  close(): Promise<void>;
}

/**
 * Builds the whole service, without listening yet: over the SQLite file at `dbPath`, or, when `databaseUrl` is
 * set, over PostgreSQL shared with the service's other instances (no file is opened then). `start` migrates
 * PostgreSQL first.
 */
export function createService(overrides: ServerConfigOverrides = {}, options: ServiceOptions = {}): Service {
  const config = resolveConfig(overrides);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createJsonLogger(undefined, config.logLevel);
  // Before the database is touched: production refuses to start without a key kept apart from it.
  const secretsKey = loadSecretsKey({
    dbPath: config.dbPath,
    keyFile: config.secretsKeyFile,
    production: config.production,
    fromEnvironment: process.env.SERVICEPAY_SECRETS_KEY,
  });
  const onEffectError = (error: unknown) =>
    logger.error('after-commit effect failed', {
      error: error instanceof Error ? error.message : String(error),
    });
  // On PostgreSQL the push may miss updates while this instance's listening connection is away: read them back.
  let pushStreams: PushStreams | undefined;
  const backend = openBackend(config, {
    logger,
    onEffectError,
    // A killed instance's picks are sent again by the others when their lease ends: sized to the schedule.
    deliveryLeaseMs: RETRY_SCHEDULES[config.webhooks.schedule].leaseMs ?? 60_000,
    onPushGap: (reason) => {
      logger.warn('push updates may have been missed; replaying open streams', { reason });
      pushStreams?.catchUp().catch((error: unknown) =>
        logger.error('push catch-up failed', {
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    },
  });
  const { bankBooks, broadcaster } = backend;
  // Every write is watched: one that fails for lack of space turns /health to 503 until a probe write succeeds.
  const storageHealth = new StorageHealth({ probeWrite: () => backend.store.probeWrite(), logger });
  const store: Store = {
    ...backend.store,
    writes: timedWrites(storageHealth.watch(backend.store.writes), backend.kind),
  };
  const secretBox = new SecretBox(secretsKey);
  let listeningUrl: string | undefined;
  const bank = new SimulatedBank({
    books: bankBooks,
    clock,
    logger,
    secret: config.bank.secret,
    bankName: config.bank.name,
    notificationUrl: () => (listeningUrl ? `${listeningUrl}/bank/notifications` : undefined),
  });
  const outbox = new WebhookOutbox();
  const credits = new UnappliedCredits(store, outbox, bank, clock, logger);
  const lifecycle = new SessionLifecycle(outbox, broadcaster, bank, credits);
  // The hosted pages' addresses are on the widget host of each environment, known once the hosts listen; a
  // service used without listening (the CLI's store commands, tests) makes sessions whose `url` is empty.
  let widgetHosts: WidgetHosts | undefined;
  const hostUrl = (environment: 'test' | 'live') => widgetHosts?.listeningUrls?.[environment] ?? '';
  const sessions = new SessionService(store, lifecycle, bank, clock, config, (environment, id, secret) => {
    const host = hostUrl(environment);
    return host === '' ? '' : hostedCheckoutUrl(host, id, secret);
  });
  const paymentLinks = new PaymentLinkService(store, sessions, clock, (environment, id) =>
    paymentLinkUrl(hostUrl(environment), id),
  );
  const processor = new BankNotificationProcessor(store, lifecycle, credits, clock);
  const refundPayouts = new RefundPayouts(store, outbox, bank, clock, logger);
  const refunds = new RefundService(store, refundPayouts, clock);
  const balance = new BalanceService(store);
  const expiry = new SessionExpiry(store, lifecycle);
  const testEndings = new TestEndings(store, expiry, sessions, clock);
  const sweeper = new ExpirySweeper(
    store,
    expiry,
    credits,
    refundPayouts,
    clock,
    logger,
    config.idempotencyKeyTtlHours * 3_600_000,
    (work) => backend.runAlone('expiry-sweep', work),
  );
  // On PostgreSQL the budgets are counted in the database, so every instance spends the same one.
  const limiters = {
    business: backend.limiter('api', config.rateLimit.perMinute, 60_000),
    widget: backend.limiter('checkout', config.rateLimit.widgetPerMinutePerAddress, 60_000),
    failedAuth: backend.limiter('auth', config.rateLimit.failedAuthPerMinutePerAddress, 60_000),
  };
  pushStreams = new PushStreams(store, broadcaster, {
    maxPerToken: config.rateLimit.streamsPerWidgetToken,
    maxPerAddress: config.rateLimit.streamsPerAddress,
  });
  const webhooks = new Webhooks({
    store,
    outbox,
    secretBox,
    clock,
    logger,
    schedule: config.webhooks.schedule,
    resolver: dnsResolver({ servers: config.webhooks.dnsServers, deadlineMs: config.webhooks.dnsDeadlineMs }),
  });
  // The widget hosts: the checkout's routes allow exactly their origins by CORS.
  // The payment links' pages spend budgets of their own (issue 36), counted like the API's on PostgreSQL.
  const linkLimiters = {
    perLink: backend.limiter('link', config.rateLimit.linkSessionsPerLink, 600_000),
    perAddress: backend.limiter('link-address', config.rateLimit.linkSessionsPerAddress, 600_000),
  };
  widgetHosts = new WidgetHosts({
    host: config.host,
    testPort: config.testWidgetPort,
    livePort: config.liveWidgetPort,
    apiUrl: () => listeningUrl ?? '',
    // The API's per-address cap, on each host too: its pages are where one address could otherwise hold
    // every file descriptor (docs/decisions/rate-limits-and-abuse.md, "the widget hosts").
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    uncappedPeer: trustedProxyMatcher(config.trustedProxies),
    // Their own total and timeouts, like the API's (docs/decisions/rate-limits-and-abuse.md, "the widget hosts").
    headersTimeoutMs: config.widgetHeadersTimeoutMs,
    requestTimeoutMs: config.widgetRequestTimeoutMs,
    maxConnections: config.widgetMaxConnections,
    pages: hostedPages({
      store,
      clock,
      logger,
      paymentLinks,
      // Derived from the secrets key: every instance signs and checks the same forms, and nothing else uses it.
      formTokens: new LinkFormTokens(createHmac('sha256', secretsKey).update('payment-link-forms').digest()),
      submissions: new LinkSubmissions(store, secretBox),
      limiters: { ...linkLimiters, pages: limiters.widget },
      trustedProxy: trustedProxyMatcher(config.trustedProxies),
    }),
  });
  const hosts = widgetHosts;
  // Each request made with an API key, written in batches off the request's path, for the portal.
  const requestLog = new RequestLog({ store, clock, logger });
  const deps: AppDeps = {
    config,
    store,
    clock,
    logger,
    secretBox,
    bank,
    processor,
    sessions,
    refunds,
    balance,
    testEndings,
    broadcaster,
    limiters,
    pushStreams,
    webhooks,
    requestLog,
    widgetOrigins: () => hosts.origins(),
    paymentLinks,
    storageHealth,
  };
  let server: Server | undefined;
  let metrics: { url: string; close(): Promise<void> } | undefined;
  let stopObserving: (() => void) | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  const tasks: BackgroundTask[] = [
    { start: () => sweeper.start(config.sweepIntervalMs), stop: () => sweeper.stop() },
    { start: () => bank.start(), stop: () => bank.stop() },
    pushStreams,
    webhooks.worker,
    // Stopped first (tasks stop in reverse): what is waiting is written while the store is open.
    requestLog,
  ];
  // The developer portal, served at /portal by createApp.
  deps.portal = portalRoutes({
    store,
    clock,
    logger,
    sessions,
    refunds,
    paymentLinks,
    testEndings,
    webhooks,
    bank,
    secretBox,
    failedAuthLimiter: limiters.failedAuth,
    webhookRetrySpanMs: retrySpanMs(RETRY_SCHEDULES[config.webhooks.schedule]),
    requestLog,
  });

  return {
    config,
    deps,
    get db(): SqliteDatabase {
      if (!backend.sqlite)
        throw new Error('this service keeps its data in PostgreSQL: read it through service.deps.store');
      return backend.sqlite;
    },
    bankBooks,
    backend,
    secretBox,
    outbox,
    sweeper,
    tasks,
    async start() {
      await backend.start();
      if (backend.shared) await checkSharedSecretsKey(store, secretBox);
      const app = createApp(deps);
      // Every answer in the envelope, shorter header and body timeouts, a connection cap.
      server = createApiServer(app, {
        headersTimeoutMs: config.headersTimeoutMs,
        requestTimeoutMs: config.requestTimeoutMs,
        maxConnections: config.maxConnections,
        maxConnectionsPerAddress: config.maxConnectionsPerAddress,
        // A load balancer carries every client's connections: only the total cap applies to it.
        uncappedPeer: trustedProxyMatcher(config.trustedProxies),
        // A business over its budget is answered 429 here, before express (issue 12).
        beforeApp: refuseOverBudgetEarly({ store, clock, businessLimiter: limiters.business }),
      });
      server.listen(config.port, config.host);
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      listeningUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
      const widgetUrls = await hosts.listen();
      if (config.metricsPort !== null) {
        metrics = await listenForMetrics({ host: config.metricsHost, port: config.metricsPort });
        startRecording();
        stopObserving = observeService({
          webhookBacklog: () => store.webhookDeliveries.backlog(),
          openPushStreams: () => pushStreams?.size ?? 0,
          pool: () =>
            backend.pool && {
              total: backend.pool.totalCount,
              idle: backend.pool.idleCount,
              waiting: backend.pool.waitingCount,
            },
          now: () => clock.now(),
        });
      }
      // Sessions that fell due while the service was down are settled before anything else.
      await sweeper.sweep();
      for (const task of tasks) await task.start();
      pruneTimer = setInterval(() => {
        const now = clock.now();
        for (const limiter of [...Object.values(limiters), ...Object.values(linkLimiters)]) {
          Promise.resolve(limiter.prune(now)).catch((error: unknown) =>
            logger.warn('rate-limit prune failed', {
              error: error instanceof Error ? error.message : String(error),
            }),
          );
        }
      }, 60_000);
      pruneTimer.unref();
      return { url: listeningUrl, server, widgetUrls, metricsUrl: metrics?.url };
    },
    async close() {
      clearInterval(pruneTimer);
      for (const task of [...tasks].reverse()) await task.stop();
      await hosts.close();
      if (metrics) {
        stopObserving?.();
        stopRecording();
        await metrics.close();
        metrics = undefined;
      }
      if (server) {
        const closed = once(server, 'close');
        server.close();
        server.closeAllConnections();
        await closed;
      }
      await backend.close();
    },
  };
}

/**
 * Instances sharing a PostgreSQL database must share the secrets key too: a webhook secret sealed by one and
 * opened by another fails, and every delivery of that instance would fail with it. Refuse to start, with what
 * to do, when this instance's key cannot open a secret already in the database. (A key file made in
 * development beside each instance's `--db` is a different key per instance.)
 */
async function checkSharedSecretsKey(store: Store, secretBox: SecretBox): Promise<void> {
  const sealed = await store.webhookEndpoints.oldestSecret();
  if (sealed === undefined) return;
  try {
    secretBox.open(sealed);
  } catch {
    throw new Error(
      "This instance's secrets key cannot open the secrets already in the database: every instance on one database needs the same key. Set SERVICEPAY_SECRETS_KEY (or --secrets-key-file) to the key the first instance used.",
    );
  }
}
