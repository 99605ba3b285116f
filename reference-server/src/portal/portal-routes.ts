import type { RequestHandler } from 'express';
import { Router } from 'express';
import { PortalSessions } from '../businesses/portal-sessions.ts';
import { HttpError } from '../errors.ts';
import { mountOperations } from '../routes/mount-operations.ts';
import type { PortalDeps, PortalServices } from '../routes/portal-deps.ts';
import { TestTransfers } from '../sessions/test-transfers.ts';
import { SESSION_LIFETIME_MS } from './portal-auth.ts';
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
  const { store, clock, bank } = portalDeps;
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
  return router;
}
