import express, { type Express, type Router } from 'express';
import type { BankNotificationProcessor } from './bank/notification-processor.ts';
import type { SimulatedBank } from './bank/simulated-bank.ts';
import type { ServerConfig } from './config.ts';
import type { Broadcaster } from './db/broadcaster.ts';
import type { StorageHealth } from './db/storage-health.ts';
import type { Store } from './db/store.ts';
import type { PushStreams } from './events/push-streams.ts';
import type { Webhooks } from './events/webhooks.ts';
import type { Clock } from './internal/clock.ts';
import type { Logger } from './internal/logger.ts';
import type { SecretBox } from './internal/secret-box.ts';
import type { RateLimiter } from './internal/sliding-window-limiter.ts';
import { requestMetrics } from './metrics/request-metrics.ts';
import { type AuthDeps, refuseOverBudget } from './middleware/authenticate.ts';
import { widgetCors } from './middleware/cors.ts';
import { errorHandler, routeNotFound } from './middleware/error-handler.ts';
import { IdempotentRequests } from './middleware/idempotency.ts';
import { jsonBody, refuseOversizedBody } from './middleware/json-body.ts';
import { rateLimitByAddress } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';
import type { RequestLog } from './middleware/request-log.ts';
import { refuseLoneSurrogates } from './middleware/well-formed-text.ts';
import { openApiRoute } from './openapi/openapi-route.ts';
import type { RefundService } from './refunds/refund-service.ts';
import { type BankRouteDeps, bankCounterRoutes, bankNotificationRoutes } from './routes/bank.ts';
import { healthRoutes } from './routes/health.ts';
import { refundRoutes } from './routes/refunds.ts';
import { sessionEventRoutes } from './routes/session-events.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { testHelperRoutes } from './routes/test-helpers.ts';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts';
import { widgetRoutes } from './routes/widget.ts';
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
  app.use(refuseOversizedBody(deps.config.bodyLimitBytes));
  // A business over its budget is answered 429 before routing and before its body is read (issue 12): by the
  // server before express (`refuseOverBudgetEarly`), here for the checkout's routes (their CORS headers).
  app.use(refuseOverBudget(auth));
  // /health and /health/ready answer 503 while the database does not answer or its disk is full (the ready one
  // also while a write fails): a load balancer takes the instance out until they answer 200. /health/live
  // answers while the process does (issue 28): a supervisor restarts only a process that cannot answer.
  app.use(healthRoutes(deps.store, deps.logger, deps.storageHealth));
  const bank: BankRouteDeps = {
    processor: deps.processor,
    bank: deps.bank,
    clock: deps.clock,
    bankSecret: deps.config.bank.secret,
    toleranceSeconds: deps.config.bank.signatureToleranceSeconds,
    publicCounter: deps.config.bank.publicCounter,
    perAddressLimit,
  };
  // The bank signs raw bytes, so its route reads the body itself, before the JSON parser.
  app.use(bankNotificationRoutes(bank));
  app.get('/openapi.json', openApiRoute);
  // The portal's forms are url-encoded and answered in HTML, so it is mounted before the JSON-only body rule.
  if (deps.portal) app.use('/portal', deps.portal);
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(refuseLoneSurrogates); // refused, not stored altered
  app.use(bankCounterRoutes(bank));
  app.use(sessionRoutes(auth, deps.sessions));
  app.use(refundRoutes(auth, deps.refunds));
  app.use(widgetRoutes(auth, deps.sessions, perAddressLimit));
  app.use(testHelperRoutes(auth, deps.store, deps.bank, deps.sessions, deps.testEndings));
  app.use(sessionEventRoutes(auth, deps.pushStreams));
  app.use(webhookEndpointRoutes(auth, deps.webhooks));
  app.use(routeNotFound);
  app.use(errorHandler(deps.logger, (error) => deps.storageHealth?.noteFailure(error)));
  return app;
}
