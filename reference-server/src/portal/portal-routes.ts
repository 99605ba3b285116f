import { readFileSync } from 'node:fs';
import {
  API_KEY_PATTERN,
  CreateWebhookEndpointParamsSchema,
  type KeyKind,
  type Session,
} from '@servicepay/node/protocol';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import { ZodError } from 'zod';
import type { SimulatedBank } from '../bank/simulated-bank.ts';
import { rollKeyIn } from '../businesses/onboarding.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Webhooks } from '../events/webhooks.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { safeEqual, sha256 } from '../internal/random.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import type { RateLimiter } from '../internal/sliding-window-limiter.ts';
import type { ApiCaller } from '../middleware/authenticate.ts';
import { addressKey } from '../middleware/rate-limit.ts';
import { transferAtBank } from '../routes/bank.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { TestEndings } from '../sessions/test-endings.ts';
import { formatMoney } from './format.ts';
import {
  CreateEndpointFormSchema,
  DeleteEndpointFormSchema,
  DeliveriesQuerySchema,
  EndpointStateFormSchema,
  EnvironmentFormSchema,
  ExpireFormSchema,
  ResendFormSchema,
  RevealSecretFormSchema,
  RollKeyFormSchema,
  SessionDetailQuerySchema,
  SessionsQuerySchema,
  SignInFormSchema,
  SignOutFormSchema,
  TransferFormSchema,
  WebhooksQuerySchema,
} from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { SECTIONS } from './layout.ts';
import { bankPage, takesTransfer } from './pages/bank-page.ts';
import { errorPage } from './pages/error-page.ts';
import { keysPage } from './pages/keys-page.ts';
import { kycPage } from './pages/kyc-page.ts';
import { sessionDetailPage, sessionsPage } from './pages/sessions-page.ts';
import { signInPage } from './pages/sign-in-page.ts';
import { endpointPage, webhooksPage } from './pages/webhooks-page.ts';
import {
  assertCsrfToken,
  assertSameOrigin,
  clearPortalCookie,
  findPortalSession,
  newCookieId,
  type PortalContext,
  portalContext,
  readCookies,
  requirePortalSession,
  SESSION_COOKIE,
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  SIGN_IN_COOKIE,
  setPortalCookie,
} from './portal-auth.ts';

/** What the portal needs from the service. */
export interface PortalDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  sessions: SessionService;
  /** Test mode's "expire now", for the session page's buttons. */
  testEndings: TestEndings;
  webhooks: Webhooks;
  bank: SimulatedBank;
  secretBox: SecretBox;
  /** Failed sign-ins count here, per address, with the API's failed authentications. */
  failedAuthLimiter: RateLimiter;
  /** How long a delivery is retried on this service's schedule (`retrySpanMs`), for the Webhooks page. */
  webhookRetrySpanMs: number;
}

/**
 * No inline script or style anywhere; forms post only to the portal; no framing; nothing else loads.
 * `Referrer-Policy: same-origin` keeps `Origin` on the portal's own form posts (the CSRF check reads it).
 *
 * @example
 * res.setHeader('Content-Security-Policy', PORTAL_CSP);
 */
export const PORTAL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', PORTAL_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
};

const ASSETS = {
  'portal.css': { type: 'text/css; charset=utf-8', file: new URL('./assets/portal.css', import.meta.url) },
  'portal.js': {
    type: 'text/javascript; charset=utf-8',
    file: new URL('./assets/portal.js', import.meta.url),
  },
} as const;

/** Only form posts reach the portal's handlers; anything else is refused before it is read. */
const requireForm: RequestHandler = (req, _res, next) => {
  if (req.method !== 'POST') return next();
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is('application/x-www-form-urlencoded')) {
    return next(new HttpError(415, 'unsupported_media_type', 'The portal takes its own forms only.'));
  }
  next();
};

const send = (res: Response, markup: SafeHtml, status = 200) => {
  res.status(status).type('html').send(markup.value);
};

/** Who the audit log names for a change made in the portal: the session's key, by id (never the key). */
const actorOf = (context: PortalContext) => `portal:${context.apiKeyId}`;

/**
 * The business's own view in the portal's environment, as the API services expect a caller: a secret key of
 * that environment, audited as the portal session's key.
 */
const callerOf = (context: PortalContext, environment = context.environment): ApiCaller => ({
  kind: 'secret',
  business: context.business,
  environment,
  actor: actorOf(context),
});

const RETURN_PATHS = new Set<string>(SECTIONS.map((section) => section.path));

/**
 * The developer portal, mounted at `/portal` by `createApp` before the JSON body parser (its forms are
 * `application/x-www-form-urlencoded`). Server-rendered HTML, every value escaped; a session cookie that is
 * `HttpOnly`, `SameSite=Strict`, `Path=/portal`; a synchronizer token and an Origin check on every post.
 *
 * @example
 * const portal = portalRoutes({ store, clock, logger, sessions, webhooks, bank, secretBox, failedAuthLimiter, webhookRetrySpanMs });
 * const app = createApp({ ...deps, portal });
 */
export function portalRoutes(deps: PortalDeps): Router {
  const { store, clock, logger, sessions, webhooks, bank, secretBox } = deps;
  const router = Router();
  const assets = new Map(
    Object.entries(ASSETS).map(([name, asset]) => [
      name,
      { type: asset.type, body: readFileSync(asset.file) },
    ]),
  );
  const signedIn = requirePortalSession(store, clock);
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });
  /** Same origin, then the session's token: a post from anywhere else changes nothing. */
  const csrf: RequestHandler = (req, res, next) => {
    assertCsrfToken((req.body as Record<string, unknown> | undefined)?._csrf, portalContext(res).csrfToken);
    next();
  };
  const sameOrigin: RequestHandler = (req, _res, next) => {
    assertSameOrigin(req);
    next();
  };
  const post = [sameOrigin, requireForm, form];

  router.use(securityHeaders);

  router.get('/assets/:name', (req, res) => {
    const asset = assets.get(String(req.params.name));
    if (!asset) throw new HttpError(404, 'not_found', 'No such file.');
    res.setHeader('Cache-Control', 'no-cache');
    res.type(asset.type).send(asset.body);
  });

  router.get('/', async (req, res) => {
    res.redirect(303, (await findPortalSession(store, clock, req)) ? '/portal/sessions' : '/portal/sign-in');
  });

  // --- sign-in and sign-out ---

  router.get('/sign-in', async (req, res) => {
    if (await findPortalSession(store, clock, req)) return res.redirect(303, '/portal/sessions');
    const token = newCookieId();
    setPortalCookie(req, res, SIGN_IN_COOKIE, token, SESSION_IDLE_MS);
    const status = req.query.signedOut === '1' ? 'You are signed out.' : undefined;
    send(res, signInPage(token, undefined, status));
  });

  router.post('/sign-in', ...post, async (req, res) => {
    const expected = readCookies(req).get(SIGN_IN_COOKIE);
    const body = (req.body ?? {}) as Record<string, unknown>;
    // Double submit: the form must echo the token of the sign-in cookie this browser got with the form.
    if (!expected || typeof body._csrf !== 'string' || !safeEqual(body._csrf, expected)) {
      throw new HttpError(403, 'forbidden', 'This sign-in form has expired. Reload the page and try again.');
    }
    const parsed = SignInFormSchema.safeParse(body);
    const refuse = async (message: string) => {
      const decision = await deps.failedAuthLimiter.hit(`auth-failure:${addressKey(req)}`, clock.now());
      if (!decision.allowed) {
        res.setHeader('Retry-After', String(decision.resetSeconds));
        throw new HttpError(429, 'rate_limited', 'Too many failed sign-ins. Wait a minute, then try again.');
      }
      send(res, signInPage(expected, message), 401);
    };
    if (!parsed.success) return refuse('Paste one of your secret keys.');
    const key = parsed.data.secretKey;
    if (key.startsWith('pk_')) {
      return refuse(
        'That is a publishable key: it is public, so it cannot sign you in. Use a secret key (sk_…).',
      );
    }
    if (!API_KEY_PATTERN.test(key))
      return refuse('That is not a ServicePay secret key (sk_test_… or sk_live_…).');
    const record = await store.apiKeys.findByHash(sha256(key));
    if (!record) return refuse('No business has that key.');
    if (record.revokedAt !== null) return refuse('That key was rolled and no longer works. Use the new one.');
    const business = await store.businesses.find(record.businessId);
    if (!business) return refuse('No business has that key.');

    const cookieId = newCookieId();
    const now = clock.now();
    await store.writes.run(async (tx) => {
      await tx.portalSessions.prune(now);
      await tx.portalSessions.insert({
        idHash: sha256(cookieId),
        businessId: business.id,
        apiKeyId: record.id,
        environment: record.environment,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + SESSION_LIFETIME_MS,
      });
    });
    logger.info('portal sign-in', { businessId: business.id, environment: record.environment });
    clearPortalCookie(req, res, SIGN_IN_COOKIE);
    setPortalCookie(req, res, SESSION_COOKIE, cookieId, SESSION_LIFETIME_MS);
    res.redirect(303, '/portal/sessions');
  });

  router.post('/sign-out', ...post, signedIn, csrf, async (req, res) => {
    SignOutFormSchema.parse(req.body);
    const { idHash } = portalContext(res);
    await store.writes.run((tx) => tx.portalSessions.remove(idHash));
    clearPortalCookie(req, res, SESSION_COOKIE);
    res.redirect(303, '/portal/sign-in?signedOut=1');
  });

  // --- the environment shown (spec §5.4: the portal's view only, never API routing) ---

  router.post('/environment', ...post, signedIn, csrf, async (req, res) => {
    const parsed = EnvironmentFormSchema.parse(req.body);
    const { idHash } = portalContext(res);
    await store.writes.run((tx) => tx.portalSessions.setEnvironment(idHash, parsed.environment));
    const back = parsed.returnTo && RETURN_PATHS.has(parsed.returnTo) ? parsed.returnTo : '/portal/sessions';
    res.redirect(303, back);
  });

  // --- API keys ---

  const keysOf = async (context: PortalContext) => {
    const of = (kind: KeyKind) => store.apiKeys.active(context.business.id, context.environment, kind);
    return { secret: await of('secret'), publishable: await of('publishable') };
  };

  router.get('/keys', signedIn, async (_req, res) => {
    const context = portalContext(res);
    send(res, keysPage(context, await keysOf(context)));
  });

  router.post('/keys/roll', ...post, signedIn, csrf, async (req, res) => {
    const parsed = RollKeyFormSchema.parse(req.body);
    const context = { ...portalContext(res), environment: parsed.environment };
    const rolled = await store.writes.run(async (tx) => {
      const result = await rollKeyIn(
        tx,
        context.business.id,
        parsed.environment,
        parsed.kind,
        clock.now(),
        actorOf(context),
      );
      // Rolling the key this session was opened with ends every other portal session opened with it; the
      // one that rolled it moves to the new key.
      const current = await tx.portalSessions.find(context.idHash);
      const replacement = result && (await tx.apiKeys.findByHash(sha256(result.key)));
      if (current && current.keyRevokedAt !== null && replacement) {
        await tx.portalSessions.rebind(context.idHash, replacement.id);
      }
      return result;
    });
    if (!rolled) throw new HttpError(404, 'not_found', 'No such business.');
    logger.info('portal key rolled', {
      businessId: context.business.id,
      environment: parsed.environment,
      kind: parsed.kind,
    });
    // The new key is in this answer only (Cache-Control: no-store): never in a URL, a cookie or the database.
    send(res, keysPage(context, await keysOf(context), rolled));
  });

  // --- webhooks ---

  /** The Webhooks page with the environment's endpoints as they are now. */
  const webhooksView = async (context: PortalContext, options: Parameters<typeof webhooksPage>[3] = {}) =>
    webhooksPage(
      context,
      (await webhooks.list(callerOf(context), { limit: 100 })).data,
      deps.webhookRetrySpanMs,
      options,
    );

  router.get('/webhooks', signedIn, async (req, res) => {
    const context = portalContext(res);
    const query = WebhooksQuerySchema.safeParse(req.query);
    send(res, await webhooksView(context, { deleted: query.success && query.data.deleted === '1' }));
  });

  router.post('/webhooks', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    const parsed = CreateEndpointFormSchema.parse(req.body);
    const params = CreateWebhookEndpointParamsSchema.safeParse({
      url: parsed.url,
      ...(parsed.description ? { description: parsed.description } : {}),
    });
    const again = async (message: string) =>
      send(res, await webhooksView(context, { error: message, url: parsed.url }), 400);
    if (!params.success) return again('Enter a full http(s) URL, such as https://example.com/webhooks.');
    try {
      const created = await webhooks.create(callerOf(context), params.data);
      const { secret, ...endpoint } = created;
      send(res, await webhooksView(context, { created: { endpoint, secret } }), 201);
    } catch (error) {
      if (error instanceof HttpError && error.status === 400) return again(error.message);
      throw error;
    }
  });

  router.get('/webhooks/:id', signedIn, async (req, res) => {
    const context = portalContext(res);
    const query = DeliveriesQuerySchema.parse(req.query);
    const id = String(req.params.id);
    const endpoint = await webhooks.retrieve(callerOf(context), id);
    const deliveries = await webhooks.listDeliveries(callerOf(context), id, {
      limit: 20,
      startingAfter: query.startingAfter,
    });
    send(
      res,
      endpointPage(context, endpoint, deliveries, {
        ...(query.resent ? { resent: query.resent } : {}),
        ...(query.changed ? { changed: query.changed } : {}),
      }),
    );
  });

  router.post('/webhooks/:id/reveal', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    RevealSecretFormSchema.parse(req.body);
    const id = String(req.params.id);
    // The caller's own endpoint (404/403 otherwise), with its sealed secret.
    const record = await webhooks.owned(callerOf(context), id);
    const endpoint = await webhooks.retrieve(callerOf(context), id);
    const secret = secretBox.open(record.secretCiphertext);
    logger.info('portal webhook secret revealed', { businessId: context.business.id, endpointId: id });
    const deliveries = await webhooks.listDeliveries(callerOf(context), id, { limit: 20 });
    send(res, endpointPage(context, endpoint, deliveries, { secret }));
  });

  router.post('/webhooks/:id/state', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    const parsed = EndpointStateFormSchema.parse(req.body);
    const id = String(req.params.id);
    const enabled = parsed.enabled === 'true';
    await webhooks.update(callerOf(context), id, { enabled });
    res.redirect(
      303,
      `/portal/webhooks/${encodeURIComponent(id)}?changed=${enabled ? 'enabled' : 'disabled'}`,
    );
  });

  router.post('/webhooks/:id/delete', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    const id = String(req.params.id);
    // Another business's endpoint answers 403 and an unknown one 404, before the form is looked at.
    const endpoint = await webhooks.retrieve(callerOf(context), id);
    const parsed = DeleteEndpointFormSchema.safeParse(req.body);
    if (!parsed.success) {
      const deliveries = await webhooks.listDeliveries(callerOf(context), id, { limit: 20 });
      return send(
        res,
        endpointPage(context, endpoint, deliveries, {
          error: 'Tick the box to confirm, then delete the endpoint.',
        }),
        400,
      );
    }
    // What DELETE /api/webhooks/{id} does: pending deliveries fail, the audit log records it.
    await webhooks.remove(callerOf(context), id);
    logger.info('portal webhook endpoint deleted', { businessId: context.business.id, endpointId: id });
    res.redirect(303, '/portal/webhooks?deleted=1');
  });

  router.post('/webhooks/:id/resend', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    const parsed = ResendFormSchema.parse(req.body);
    const id = String(req.params.id);
    const result = await webhooks.resend(callerOf(context), parsed.eventId, id);
    const resent = result.deliveries[0];
    res.redirect(303, `/portal/webhooks/${encodeURIComponent(id)}${resent ? `?resent=${resent}` : ''}`);
  });

  // --- sessions ---

  router.get('/sessions', signedIn, async (req, res) => {
    const context = portalContext(res);
    const query = SessionsQuerySchema.parse(req.query);
    const status = query.status === '' ? undefined : query.status;
    const reference = query.reference === '' ? undefined : query.reference;
    const startingAfter = query.startingAfter === '' ? undefined : query.startingAfter;
    const list = await sessions.list(callerOf(context), { limit: 20, status, reference, startingAfter });
    send(res, sessionsPage(context, list, { status, reference, startingAfter }));
  });

  router.get('/sessions/:id', signedIn, async (req, res) => {
    const context = portalContext(res);
    const session = await sessions.retrieve(callerOf(context), String(req.params.id));
    const history = await store.events.forSessionAfter(session.id, 0);
    const query = SessionDetailQuerySchema.safeParse(req.query);
    send(
      res,
      sessionDetailPage(
        context,
        session,
        history,
        query.success ? (transferNotice(session, query.data) ?? endedNotice(session, query.data)) : undefined,
      ),
    );
  });

  router.post('/sessions/:id/expire', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    const parsed = ExpireFormSchema.parse(req.body);
    // Test sessions only, like the test bank: the test view of this business, whatever the toggle shows.
    const session = await deps.testEndings.expire(
      callerOf(context, 'test'),
      String(req.params.id),
      parsed.ending,
    );
    // Redirect after the post, so a reload shows the result and ends nothing again.
    res.redirect(303, `/portal/sessions/${encodeURIComponent(session.id)}?ended=${parsed.ending}`);
  });

  // --- the test bank ---

  router.get('/bank', signedIn, async (_req, res) => {
    const context = portalContext(res);
    let open: Session[] = [];
    if (context.environment === 'test') {
      const caller = callerOf(context);
      const waiting = (await sessions.list(caller, { limit: 50, status: 'awaiting_payment' })).data;
      const mismatched = (await sessions.list(caller, { limit: 50, status: 'mismatch' })).data;
      open = [...waiting, ...mismatched]
        .filter(takesTransfer)
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    }
    send(res, bankPage(context, open));
  });

  router.post('/bank/transfers', ...post, signedIn, csrf, async (req, res) => {
    const context = portalContext(res);
    const parsed = TransferFormSchema.parse(req.body);
    // Simulated money only ever reaches test sessions: the test view of this business, whatever the toggle shows.
    const session = await sessions.retrieve(callerOf(context, 'test'), parsed.sessionId);
    if (!takesTransfer(session) || !session.virtualAccount) {
      throw new HttpError(
        409,
        'session_not_active',
        `This session takes no transfer now (it is ${session.status}).`,
      );
    }
    let amount = session.amount;
    if (parsed.choice === 'other') {
      amount = Number(parsed.amount ?? '');
      if (!Number.isSafeInteger(amount) || amount <= 0) {
        throw new HttpError(
          400,
          'validation_failed',
          'Enter the amount as a whole number of minor units, above 0.',
        );
      }
    }
    const transfer = await transferAtBank(bank, session.virtualAccount.accountNumber, amount);
    const params = new URLSearchParams({ sent: String(amount), outcome: transfer.outcome });
    if (transfer.returnReason) params.set('reason', transfer.returnReason);
    // Redirect after the post, so a reload shows the result and never sends the money again.
    res.redirect(303, `/portal/sessions/${encodeURIComponent(session.id)}?${params}`);
  });

  // --- KYC ---

  router.get('/kyc', signedIn, (_req, res) => {
    send(res, kycPage(portalContext(res)));
  });

  router.use((req, _res, next) => {
    next(new HttpError(404, 'route_not_found', `No portal page ${req.method} ${req.path}.`));
  });
  router.use(portalErrorHandler(logger));
  return router;
}

function transferNotice(
  session: Session,
  query: { sent?: string | undefined; outcome?: string | undefined; reason?: string | undefined },
): { tone: 'good' | 'warn'; text: SafeHtml } | undefined {
  if (!query.sent || !query.outcome) return undefined;
  const sent = formatMoney(Number(query.sent), session.currency);
  if (query.outcome === 'credited') {
    return {
      tone: 'good',
      text: html`Sent ${sent}: the bank credited it. The session is now ${session.status}.`,
    };
  }
  if (query.reason === 'amount_mismatch') {
    return {
      tone: 'warn',
      text: html`Sent ${sent}: not the session amount, so the bank returned it. The session is now ${session.status}.`,
    };
  }
  return { tone: 'warn', text: html`Sent ${sent}: the account was closed, so the bank returned it.` };
}

function endedNotice(
  session: Session,
  query: { ended?: 'session' | 'account' | undefined },
): { tone: 'info'; text: SafeHtml } | undefined {
  if (!query.ended) return undefined;
  return query.ended === 'session'
    ? { tone: 'info', text: html`The session's lifetime was ended now. It is ${session.status}.` }
    : {
        tone: 'info',
        text: html`The account's countdown was ended now. The session is ${session.status}: the checkout offers a new account.`,
      };
}

/** Portal errors as pages: the status and a message for people; faults of the service are logged. */
function portalErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req: Request, res: Response, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const context = res.locals.portal as PortalContext | undefined;
    let status = 500;
    let message = 'Something went wrong on our side. It has been logged.';
    if (error instanceof HttpError) {
      status = error.status;
      message = error.message;
      if (error.headers) res.set(error.headers);
    } else if (error instanceof ZodError) {
      status = 400;
      message = error.issues.map((issue) => issue.message).join(' ');
    } else {
      const fault = error as { status?: unknown };
      if (typeof fault.status === 'number' && fault.status >= 400 && fault.status < 500) {
        status = fault.status;
        message = status === 413 ? 'The form is too large.' : 'The form could not be read.';
      } else {
        logger.error('portal error', {
          requestId: res.locals.requestId,
          method: req.method,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
      }
    }
    send(res, errorPage(status, message, context, res.locals.requestId as string | undefined), status);
  };
}
