import { readFileSync } from 'node:fs';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import { ZodError } from 'zod';
import { PortalSessions } from '../businesses/portal-sessions.ts';
import { storageFull } from '../db/storage-errors.ts';
import { HttpError, storageFullError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { asHttpError } from '../middleware/domain-error-status.ts';
import { refuseOversizedBody } from '../middleware/json-body.ts';
import { requestIdOf } from '../middleware/request-context.ts';
import { TestTransfers } from '../sessions/test-transfers.ts';
import { sendPage } from './layout.ts';
import { bankPageRoutes } from './pages/bank-page.ts';
import { endpointPageRoutes } from './pages/endpoint-page.ts';
import { errorPage } from './pages/error-page.ts';
import { eventsPageRoutes } from './pages/events-page.ts';
import { keysPageRoutes } from './pages/keys-page.ts';
import { kycPageRoutes } from './pages/kyc-page.ts';
import { requestsPageRoutes } from './pages/requests-page.ts';
import { sessionPageRoutes } from './pages/session-page.ts';
import { sessionsPageRoutes } from './pages/sessions-page.ts';
import { signInPageRoutes } from './pages/sign-in-page.ts';
import { webhooksPageRoutes } from './pages/webhooks-page.ts';
import {
  assertCsrfToken,
  assertSameOrigin,
  assertSessionEnvironment,
  portalContext,
  requirePortalSession,
  SESSION_LIFETIME_MS,
  signedInContext,
} from './portal-auth.ts';
import type { PortalDeps, PortalServices } from './portal-deps.ts';
import { PORTAL_ROUTES, type PortalRoute, type PortalRouteName } from './portal-route-table.ts';

export type { PortalDeps } from './portal-deps.ts';

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

/** The largest form the portal reads. */
const FORM_LIMIT_BYTES = 16 * 1024;

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

/**
 * A signed-in page or form names no environment but the session's. It runs after the CSRF check, so a forged
 * post meets that refusal first.
 */
const sameEnvironment: RequestHandler = (req, res, next) => {
  assertSessionEnvironment(req, portalContext(res));
  next();
};

/** The checks a route's access asks for, in order, before its handler (see `PortalAccess`). */
function checksFor(
  route: PortalRoute,
  checks: { signedIn: RequestHandler; form: RequestHandler[]; csrf: RequestHandler },
): RequestHandler[] {
  const posted = route.method === 'post';
  switch (route.access) {
    case 'public':
      return [];
    case 'sign-in':
      return checks.form;
    case 'session':
      return posted
        ? [...checks.form, checks.signedIn, checks.csrf, sameEnvironment]
        : [checks.signedIn, sameEnvironment];
  }
}

/**
 * The developer portal, mounted at `/portal` by `createApp` before the JSON body parser (its forms are
 * `application/x-www-form-urlencoded`). Server-rendered HTML, every value escaped; a session cookie that is
 * `HttpOnly`, `SameSite=Strict`, `Path=/portal`; a synchronizer token and an Origin check on every post. The
 * routes are exactly `PORTAL_ROUTES`, each behind the checks of its access, so a session reaches only the
 * environment of the key that signed in.
 *
 * @example
 * const portal = portalRoutes({ store, clock, logger, sessions, webhooks, bank, secretBox, failedAuthLimiter, webhookRetrySpanMs });
 * const app = createApp({ ...deps, portal });
 */
export function portalRoutes(portalDeps: PortalDeps): Router {
  const { store, clock, logger, bank } = portalDeps;
  // The portal's own writes (its sign-ins) and the Test bank's transfers, through services like the rest.
  const deps: PortalServices = {
    ...portalDeps,
    portalSessions: new PortalSessions(store, clock, { lifetimeMs: SESSION_LIFETIME_MS }),
    testTransfers: new TestTransfers(store, bank),
  };
  const router = Router();
  const assets = new Map(
    Object.entries(ASSETS).map(([name, asset]) => [
      name,
      { type: asset.type, body: readFileSync(asset.file) },
    ]),
  );
  const sameOrigin: RequestHandler = (req, _res, next) => {
    assertSameOrigin(req);
    next();
  };
  const checks = {
    signedIn: requirePortalSession(store, clock, deps.portalSessions),
    /** Same origin, a url-encoded form (one announced over its limit refused before it is read), read. */
    form: [
      sameOrigin,
      requireForm,
      refuseOversizedBody(FORM_LIMIT_BYTES),
      express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: 50 }),
    ],
    /** The session's token: a post from anywhere else changes nothing. */
    csrf: ((req, res, next) => {
      assertCsrfToken((req.body as Record<string, unknown> | undefined)?._csrf, portalContext(res).csrfToken);
      next();
    }) satisfies RequestHandler,
  };
  const asset: RequestHandler = (req, res) => {
    const found = assets.get(String(req.params.name));
    if (!found) throw new HttpError(404, 'not_found', 'No such file.');
    res.setHeader('Cache-Control', 'no-cache');
    res.type(found.type).send(found.body);
  };
  // One module per page, each with its own routes' handlers: together exactly the route table.
  const handlers = {
    asset,
    ...signInPageRoutes(deps),
    ...sessionsPageRoutes(deps),
    ...sessionPageRoutes(deps),
    ...bankPageRoutes(deps),
    ...keysPageRoutes(deps),
    ...webhooksPageRoutes(deps),
    ...endpointPageRoutes(deps),
    ...eventsPageRoutes(deps),
    ...requestsPageRoutes(deps),
    ...kycPageRoutes(),
  } satisfies Record<PortalRouteName, RequestHandler>;

  router.use(securityHeaders);
  for (const [name, route] of Object.entries(PORTAL_ROUTES) as Array<[PortalRouteName, PortalRoute]>) {
    router[route.method](route.path, ...checksFor(route, checks), handlers[name]);
  }
  router.use((req, _res, next) => {
    next(new HttpError(404, 'route_not_found', `No portal page ${req.method} ${req.path}.`));
  });
  router.use(portalErrorHandler(logger));
  return router;
}

/** Portal errors as pages: the status and a message for people; faults of the service are logged. */
function portalErrorHandler(logger: Logger): ErrorRequestHandler {
  return (raised: unknown, req: Request, res: Response, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const context = signedInContext(res);
    // A full disk is the API's 503 here too: nothing was kept, and the same form works once there is space.
    const error = storageFull(raised)
      ? storageFullError(
          'The service cannot store anything right now: its disk is full. Nothing was changed; try again in a minute.',
        )
      : asHttpError(raised);
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
          requestId: requestIdOf(res),
          method: req.method,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
      }
    }
    const code = error instanceof HttpError ? error.code : undefined;
    sendPage(res, errorPage(status, message, { context, code, requestId: requestIdOf(res) }), status);
  };
}
