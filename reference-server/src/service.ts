import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { type AppDeps, createApp } from './app.ts';
import { BankNotificationProcessor } from './bank/notification-processor.ts';
import { SimulatedBank } from './bank/simulated-bank.ts';
import { UnappliedCredits } from './bank/unapplied-credits.ts';
import { resolveConfig, type ServerConfig, type ServerConfigOverrides } from './config.ts';
import { type BankBooks, SqliteBankBooks } from './db/bank-books.ts';
import { openDatabase, type SqliteDatabase } from './db/database.ts';
import { EXPIRY_SWEEP_LOCK_KEY, runAlone } from './db/postgres/advisory-lock.ts';
import { PostgresBankBooks } from './db/postgres/bank-books.ts';
import { migratePostgres } from './db/postgres/migrate-postgres.ts';
import { PostgresRateLimiter } from './db/postgres/postgres-rate-limiter.ts';
import { createPostgresStore } from './db/postgres/postgres-store.ts';
import { createStore, type Store } from './db/store.ts';
import { WalCheckpointer } from './db/wal-checkpointer.ts';
import { type Broadcaster, InProcessBroadcaster } from './events/broadcaster.ts';
import { WebhookOutbox } from './events/outbox.ts';
import { PostgresBroadcaster } from './events/postgres-broadcaster.ts';
import { PushStreams } from './events/push-streams.ts';
import { dnsResolver } from './events/webhook-url-policy.ts';
import { RETRY_SCHEDULES, retrySpanMs } from './events/webhook-worker.ts';
import { Webhooks } from './events/webhooks.ts';
import { createApiServer } from './internal/client-error.ts';
import { type Clock, systemClock } from './internal/clock.ts';
import { createJsonLogger, type Logger } from './internal/logger.ts';
import { SecretBox } from './internal/secret-box.ts';
import { loadSecretsKey } from './internal/secrets-key.ts';
import { type RateLimiter, SlidingWindowLimiter } from './internal/sliding-window-limiter.ts';
import { refuseOverBudgetEarly } from './middleware/authenticate.ts';
import { portalRoutes } from './portal/portal-routes.ts';
import { ExpirySweeper } from './sessions/expiry-sweeper.ts';
import { SessionExpiry } from './sessions/session-expiry.ts';
import { SessionLifecycle } from './sessions/session-lifecycle.ts';
import { SessionService } from './sessions/session-service.ts';
import { TestEndings } from './sessions/test-endings.ts';
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
  /** The PostgreSQL pool when `databaseUrl` is set. */
  readonly pool: pg.Pool | undefined;
  secretBox: SecretBox;
  outbox: WebhookOutbox;
  sweeper: ExpirySweeper;
  /** Background parts; add to it before `start`. */
  tasks: BackgroundTask[];
  /**
   * Listens on `config.host:config.port`, the test widget host on `config.testWidgetPort` and the production
   * one on `config.liveWidgetPort` (0 picks a free port), and starts the background parts. `widgetUrls` are the
   * hosts' base URLs: the script is at `${widgetUrls.test}/latest/widget.js`.
   */
  start(): Promise<{ url: string; server: Server; widgetUrls: WidgetUrls }>;
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
  const logger = options.logger ?? createJsonLogger();
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
  const pool =
    config.databaseUrl === null
      ? undefined
      : openPostgresPool(config.databaseUrl, config.databasePoolSize, logger);
  // On PostgreSQL an instance keeps nothing in a local file: the simulated bank's books are in the shared
  // database too, so the bank is one party for every instance, as a real bank is.
  let db: SqliteDatabase | undefined;
  let checkpointer: WalCheckpointer | undefined;
  let store: Store;
  let bankBooks: BankBooks;
  if (pool) {
    store = createPostgresStore(pool, {
      onEffectError,
      // A killed instance's picks are sent again by the others when their lease ends: sized to the schedule.
      deliveryLeaseMs: RETRY_SCHEDULES[config.webhooks.schedule].leaseMs ?? 60_000,
    });
    bankBooks = new PostgresBankBooks(pool);
  } else {
    db = openDatabase(config.dbPath);
    // Checkpoints off the event loop (db/wal-checkpointer.ts); an in-memory database has no WAL.
    if (config.dbPath !== ':memory:') {
      checkpointer = WalCheckpointer.attach(db, config.dbPath, (error) =>
        logger.error('WAL checkpoint failed', {
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    }
    store = createStore(db, onEffectError, () => checkpointer?.committed());
    bankBooks = new SqliteBankBooks(db);
  }
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
  // On PostgreSQL every instance hears every transition (LISTEN/NOTIFY), whichever instance holds the stream.
  let pushStreams: PushStreams | undefined;
  const postgresBroadcaster =
    pool && config.databaseUrl !== null
      ? new PostgresBroadcaster({
          pool,
          connection: { connectionString: config.databaseUrl },
          logger,
          // Updates this instance may have missed while its listening connection was away: read them back.
          onGap: (reason) => {
            logger.warn('push updates may have been missed; replaying open streams', { reason });
            pushStreams?.catchUp().catch((error: unknown) =>
              logger.error('push catch-up failed', {
                error: error instanceof Error ? error.message : String(error),
              }),
            );
          },
        })
      : undefined;
  const broadcaster: Broadcaster = postgresBroadcaster ?? new InProcessBroadcaster();
  const outbox = new WebhookOutbox();
  const credits = new UnappliedCredits(store, outbox, bank, clock, logger);
  const lifecycle = new SessionLifecycle(outbox, broadcaster, bank, credits);
  const sessions = new SessionService(store, lifecycle, bank, clock, config);
  const processor = new BankNotificationProcessor(store, lifecycle, credits, clock);
  const expiry = new SessionExpiry(store, lifecycle);
  const testEndings = new TestEndings(store, expiry, sessions, clock);
  const sweeper = new ExpirySweeper(
    store,
    expiry,
    credits,
    clock,
    logger,
    config.idempotencyKeyTtlHours * 3_600_000,
    pool ? (work) => runAlone(pool, EXPIRY_SWEEP_LOCK_KEY, work) : undefined,
  );
  // On PostgreSQL the budgets are counted in the database, so every instance spends the same one.
  const limiter = (name: string, limit: number): RateLimiter =>
    pool
      ? new PostgresRateLimiter(pool, { name, limit, windowMs: 60_000 })
      : new SlidingWindowLimiter(limit, 60_000);
  const limiters = {
    business: limiter('api', config.rateLimit.perMinute),
    widget: limiter('checkout', config.rateLimit.widgetPerMinutePerAddress),
    failedAuth: limiter('auth', config.rateLimit.failedAuthPerMinutePerAddress),
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
  const widgetHosts = new WidgetHosts({
    host: config.host,
    testPort: config.testWidgetPort,
    livePort: config.liveWidgetPort,
    apiUrl: () => listeningUrl ?? '',
  });
  const deps: AppDeps = {
    config,
    store,
    clock,
    logger,
    secretBox,
    bank,
    processor,
    sessions,
    testEndings,
    broadcaster,
    limiters,
    pushStreams,
    webhooks,
    widgetOrigins: () => widgetHosts.origins(),
  };
  let server: Server | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  const tasks: BackgroundTask[] = [
    { start: () => sweeper.start(config.sweepIntervalMs), stop: () => sweeper.stop() },
    { start: () => bank.start(), stop: () => bank.stop() },
    pushStreams,
    webhooks.worker,
  ];
  // The developer portal, served at /portal by createApp.
  deps.portal = portalRoutes({
    store,
    clock,
    logger,
    sessions,
    testEndings,
    webhooks,
    bank,
    secretBox,
    failedAuthLimiter: limiters.failedAuth,
    webhookRetrySpanMs: retrySpanMs(RETRY_SCHEDULES[config.webhooks.schedule]),
  });

  return {
    config,
    deps,
    get db(): SqliteDatabase {
      if (!db)
        throw new Error('this service keeps its data in PostgreSQL: read it through service.deps.store');
      return db;
    },
    bankBooks,
    pool,
    secretBox,
    outbox,
    sweeper,
    tasks,
    async start() {
      // Instances starting together apply each migration once (an advisory lock per file).
      if (pool) {
        await migratePostgres(pool);
        await checkSharedSecretsKey(pool, secretBox);
      }
      await postgresBroadcaster?.start();
      const app = createApp(deps);
      // Every answer in the envelope, shorter header and body timeouts, a connection cap.
      server = createApiServer(app, {
        headersTimeoutMs: config.headersTimeoutMs,
        requestTimeoutMs: config.requestTimeoutMs,
        maxConnections: config.maxConnections,
        // A business over its budget is answered 429 here, before express (issue 12).
        beforeApp: refuseOverBudgetEarly({ store, clock, businessLimiter: limiters.business }),
      });
      server.listen(config.port, config.host);
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      listeningUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
      const widgetUrls = await widgetHosts.listen();
      // Sessions that fell due while the service was down are settled before anything else.
      await sweeper.sweep();
      for (const task of tasks) await task.start();
      pruneTimer = setInterval(() => {
        const now = clock.now();
        for (const limiter of Object.values(limiters)) {
          Promise.resolve(limiter.prune(now)).catch((error: unknown) =>
            logger.warn('rate-limit prune failed', {
              error: error instanceof Error ? error.message : String(error),
            }),
          );
        }
      }, 60_000);
      pruneTimer.unref();
      return { url: listeningUrl, server, widgetUrls };
    },
    async close() {
      clearInterval(pruneTimer);
      for (const task of [...tasks].reverse()) await task.stop();
      await widgetHosts.close();
      if (server) {
        const closed = once(server, 'close');
        server.close();
        server.closeAllConnections();
        await closed;
      }
      // Let queued writes land before the file closes (on PostgreSQL each job already has its own transaction;
      // a database that is down must not keep the rest from closing).
      await store.writes.run(async () => undefined).catch(() => undefined);
      await postgresBroadcaster?.close();
      await pool?.end();
      // The thread's connection first: the last connection to close checkpoints the WAL and removes it.
      await checkpointer?.close();
      db?.close();
    },
  };
}

/**
 * The pool every read and write job of this instance uses. An idle client that loses its connection is
 * dropped by the pool and logged; the next checkout connects again.
 */
function openPostgresPool(connectionString: string, max: number, logger: Logger): pg.Pool {
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 5_000, max });
  pool.on('error', (error) =>
    logger.warn('an idle PostgreSQL connection was lost', { error: error.message }),
  );
  return pool;
}

/**
 * Instances sharing a PostgreSQL database must share the secrets key too: a webhook secret sealed by one and
 * opened by another fails, and every delivery of that instance would fail with it. Refuse to start, with what
 * to do, when this instance's key cannot open a secret already in the database. (A key file made in
 * development beside each instance's `--db` is a different key per instance.)
 */
async function checkSharedSecretsKey(pool: pg.Pool, secretBox: SecretBox): Promise<void> {
  const { rows } = await pool.query<{ sealed: string }>(
    'SELECT secret_ciphertext AS sealed FROM webhook_endpoints ORDER BY seq LIMIT 1',
  );
  const sealed = rows[0]?.sealed;
  if (sealed === undefined) return;
  try {
    secretBox.open(sealed);
  } catch {
    throw new Error(
      "This instance's secrets key cannot open the secrets already in the database: every instance on one database needs the same key. Set SERVICEPAY_SECRETS_KEY (or --secrets-key-file) to the key the first instance used.",
    );
  }
}
