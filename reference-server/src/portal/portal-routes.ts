import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import { ZodError } from 'zod';
import { PortalSessions } from '../businesses/portal-sessions.ts';
import { storageFull } from '../db/storage-errors.ts';
import { HttpError, storageFullError } from '../errors.ts';
import type { Logger } from '../internal/logger.ts';
import { asHttpError } from '../middleware/domain-error-status.ts';
import { requestIdOf } from '../middleware/request-context.ts';
import { mountOperations } from '../routes/mount-operations.ts';
import type { PortalDeps, PortalServices } from '../routes/portal-deps.ts';
import { TestTransfers } from '../sessions/test-transfers.ts';
import { sendPage } from './layout.ts';
import { errorPage } from './pages/error-page.ts';
import { SESSION_LIFETIME_MS, signedInContext } from './portal-auth.ts';
import { portalEdge } from './portal-edge.ts';
import { PORTAL_OPERATIONS } from './portal-operations.ts';

export type { PortalDeps } from '../routes/portal-deps.ts';

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

/**
 * The developer portal, mounted at `/portal` by `createApp` before the JSON body parser (its forms are
 * `application/x-www-form-urlencoded`). Server-rendered HTML, every value escaped; a session cookie that is
 * `HttpOnly`, `SameSite=Strict`, `Path=/portal`; a synchronizer token and an Origin check on every post. The
 * routes are exactly `PORTAL_OPERATIONS`, each behind the checks of its auth (`portalEdge`), so a session
 * reaches only the environment of the key that signed in.
 *
 * @example
 * const portal = portalRoutes({ store, clock, logger, sessions, webhooks, bank, secretBox, failedAuthLimiter, webhookRetrySpanMs });
 * const app = createApp({ ...deps, portal });
 */
export function portalRoutes(portalDeps: PortalDeps): Router {
  const { store, clock, logger, bank } = portalDeps;
  // The portal's own writes (its sign-ins) and the Test bank's transfers, through services like the rest.
  const services: PortalServices = {
    ...portalDeps,
    portalSessions: new PortalSessions(store, clock, { lifetimeMs: SESSION_LIFETIME_MS }),
    testTransfers: new TestTransfers(store, bank),
  };
  const router = Router();
  router.use(securityHeaders);
  mountOperations(router, PORTAL_OPERATIONS, portalEdge(services), '/portal');
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
      // A form or query that failed its schema: what each field needs, as the form's own words say it.
      message = error.fieldErrors ? error.fieldErrors.map((field) => field.message).join(' ') : error.message;
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
