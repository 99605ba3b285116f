import express, { type Express, type Router } from 'express';
import type { BankNotificationProcessor } from './bank/notification-processor.ts';
import type { SimulatedBank } from './bank/simulated-bank.ts';
import type { ServerConfig } from './config.ts';
import type { Broadcaster } from './db/broadcaster.ts';
import type { StorageHealth } from './db/storage-health.ts';
import type { Store } from './db/store.ts';
import type { PushStreams } from './events/push-streams.ts';
import type { Webhooks } from './events/webhooks.ts';
import { ExportService } from './exports/export-service.ts';
import type { Clock } from './internal/clock.ts';
import type { Logger } from './internal/logger.ts';
import type { SecretBox } from './internal/secret-box.ts';
import type { RateLimiter } from './internal/sliding-window-limiter.ts';
import type { BalanceService } from './ledger/balance-service.ts';
import { requestMetrics } from './metrics/request-metrics.ts';
import type { AuthDeps } from './middleware/authenticate.ts';
import { widgetCors } from './middleware/cors.ts';
import { routeNotFound } from './middleware/error-handler.ts';
import { IdempotentRequests } from './middleware/idempotency.ts';
import { rateLimitByAddress } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';
import type { RequestLog } from './middleware/request-log.ts';
import { openApiDocument } from './openapi/openapi-document.ts';
import type { PaymentLinkService } from './payment-links/payment-link-service.ts';
import { PAGE_WORDS, sendErrorPage } from './portal/pages/error-page.ts';
import type { RefundService } from './refunds/refund-service.ts';
import { apiEdge } from './routes/api-edge.ts';
import { API_OPERATIONS } from './routes/api-operations.ts';
import { APP_CHECKS } from './routes/app-checks.ts';
import { healthChecks } from './routes/health.ts';
import { mountOperations } from './routes/mount-operations.ts';
import type { AnyOperation } from './routes/operation.ts';
import type { SessionService } from './sessions/session-service.ts';
import type { TestEndings } from './sessions/test-endings.ts';

/** Everything the HTTP layer needs; built by `createService`, or by a test with its own parts. */
export interface AppDeps {
  config: ServerConfig;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Seals remembered idempotent responses (some hold a client secret or a webhook signing secret). */
  secretBox: SecretBox;
  bank: SimulatedBank;
  processor: BankNotificationProcessor;
  sessions: SessionService;
  refunds: RefundService;
  paymentLinks: PaymentLinkService;
  /** The ledger's reads for the API (`GET /api/balance-transactions`, `GET /api/balance`). */
  balance: BalanceService;
  /** Test mode's "expire now" (`/api/test/sessions/{id}/expire`, `…/account/expire`, the portal's button). */
  testEndings: TestEndings;
  broadcaster: Broadcaster;
  limiters: {
    business: RateLimiter;
    widget: RateLimiter;
    failedAuth: RateLimiter;
  };
  /** The checkout's open push streams (`GET /api/widget/sessions/{id}/events`). */
  pushStreams: PushStreams;
  /** Webhook endpoints, their deliveries and resends (`/api/webhooks`, `/api/events/{id}/resend`). */
  webhooks: Webhooks;
  /** Logs each request made with an API key, for the portal's Requests page (none: nothing is logged). */
  requestLog?: RequestLog;
  /** The widget hosts' origins, the only ones the checkout's routes allow by CORS (none when absent). */
  widgetOrigins?: () => ReadonlySet<string>;
  /** The developer portal (`portal/portal-routes.ts`), mounted at `/portal` before the JSON body parser. */
  portal?: Router;
  /**
   * Whether the store takes writes (`createService` watches its writes with it): `/health` answers 503 while
   * its disk is full. Absent: `/health` asks only whether the database answers.
   */
  storageHealth?: StorageHealth;
}

/** The service's HTTP API as an express app. It never listens: `createService(...).start()` does. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Behind a load balancer the per-address limits count the client's address, not the balancer's: only the
  // listed proxies' X-Forwarded-For is believed (none by default; see internal/trusted-proxies.ts).
  if (deps.config.trustedProxies.length > 0) app.set('trust proxy', deps.config.trustedProxies);
  // No ETag: every answer is no-store, so no client revalidates, and hashing each body cost a SHA-1 per request.
  app.set('etag', false);
  const auth: AuthDeps = {
    store: deps.store,
    clock: deps.clock,
    businessLimiter: deps.limiters.business,
    checkoutLimiter: deps.limiters.widget,
    failedAuthLimiter: deps.limiters.failedAuth,
    ...(deps.requestLog ? { requestLog: deps.requestLog } : {}),
  };
  const perAddressLimit = rateLimitByAddress(deps.limiters.widget, deps.clock);
  // `idempotent` on a route finds it here: every router (the extra ones too) gets it without more plumbing.
  IdempotentRequests.attach(app, {
    store: deps.store,
    clock: deps.clock,
    secretBox: deps.secretBox,
    logger: deps.logger,
    ttlMs: deps.config.idempotencyKeyTtlHours * 3_600_000,
  });

  app.use(requestId);
  app.use(requestMetrics); // records nothing while metrics are off
  const noOrigins: ReadonlySet<string> = new Set();
  app.use(widgetCors(deps.widgetOrigins ?? (() => noOrigins)));
  app.use((_req, res, next) => {
    // Responses carry keys, client secrets and payer details: never cached anywhere.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  // A body announced over the limit is refused before it is read, on every route (the portal's forms and the
  // bank's notifications read theirs themselves).
  app.use(APP_CHECKS.bodyLimit.mount(deps.config.bodyLimitBytes));
  // A business over its budget is answered 429 before routing and before its body is read (issue 12): by the
  // server before express (`refuseOverBudgetEarly`), here for the checkout's routes (their CORS headers).
  app.use(APP_CHECKS.budget.mount(auth));
  const operations = apiEdge({
    auth,
    perAddressLimit,
    bankSignature: {
      secret: deps.config.bank.secret,
      clock: deps.clock,
      toleranceSeconds: deps.config.bank.signatureToleranceSeconds,
    },
    handlers: {
      store: deps.store,
      sessions: deps.sessions,
      refunds: deps.refunds,
      paymentLinks: deps.paymentLinks,
      balance: deps.balance,
      exports: new ExportService(deps.store, deps.config.exportPageSize),
      testEndings: deps.testEndings,
      webhooks: deps.webhooks,
      pushStreams: deps.pushStreams,
      bank: deps.bank,
      processor: deps.processor,
      publicBankCounter: deps.config.bank.publicCounter,
      // /health, /health/live and /health/ready (issue 28), sharing one database check.
      health: healthChecks(deps.store, deps.logger, deps.storageHealth),
      openApiDocument,
    },
  });
  // Before the JSON parser: the bank signs raw bytes, so its notification reads the body itself; health and
  // this document read none.
  const readsOwnBody = (operation: AnyOperation) => operation.readsOwnBody === true;
  mountOperations(app, API_OPERATIONS.filter(readsOwnBody), operations);
  // The portal's forms are url-encoded and answered in HTML, so it is mounted before the JSON-only body rule.
  // Its errors are classified as the API's are, answered as pages.
  const onStorageFull = (error: unknown) => deps.storageHealth?.noteFailure(error);
  if (deps.portal) {
    app.use(
      '/portal',
      deps.portal,
      APP_CHECKS.errorHandler.mount({
        logger: deps.logger,
        onStorageFull,
        words: PAGE_WORDS,
        answer: sendErrorPage,
      }),
    );
  }
  app.use(APP_CHECKS.jsonBody.mount(deps.config.bodyLimitBytes));
  mountOperations(
    app,
    API_OPERATIONS.filter((operation) => !readsOwnBody(operation)),
    operations,
  );
  app.use(routeNotFound);
  app.use(APP_CHECKS.errorHandler.mount({ logger: deps.logger, onStorageFull }));
  return app;
}
