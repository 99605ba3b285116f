import type { RequestHandler } from 'express';
import { HttpError } from '../errors.ts';

/** The routes the checkout calls from the frame, which runs on a widget host's origin. */
const WIDGET_ROUTE = /^\/api\/widget\/(bootstrap|profile|sessions\/[^/]+\/(events|accounts|cancel))\/?$/;

/** What a widget host's preflight is told: the methods, the request headers, and how long it may be cached. */
export const PREFLIGHT = {
  allowMethods: 'GET, POST',
  // Idempotency-Key: the checkout's POSTs (new account, cancel) replay like the merchant's.
  allowHeaders: 'Authorization, Content-Type, Last-Event-ID, Idempotency-Key',
  maxAgeSeconds: 600,
} as const;

/** The headers the checkout frame may read (`Date` so the checkout can follow the service's clock). */
export const EXPOSED_HEADERS =
  'Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Date, Idempotent-Replayed';

/**
 * Whether `path` is one of the checkout's routes, the only ones that answer with CORS headers (the OpenAPI
 * document declares those headers on exactly these).
 *
 * @example
 * isWidgetRoute('/api/widget/bootstrap'); // true
 * isWidgetRoute('/api/webhooks'); // false
 */
export const isWidgetRoute = (path: string): boolean => WIDGET_ROUTE.test(path);

/**
 * CORS for the checkout's routes only, for exactly the widget hosts' origins: the checkout frame runs there
 * (sandboxed, but with its own origin), so no other page's script can drive these routes from a browser. A
 * request from another origin gets no CORS headers (the browser refuses it) and a preflight from one answers
 * 403. The secret-key API sends no CORS headers at all, and a preflight for it answers 404 like any unknown
 * route. `Date` is exposed so the checkout can follow the service's clock.
 *
 * @example
 * app.use(widgetCors(() => widgetHosts.origins()));
 */
export function widgetCors(allowedOrigins: () => ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    if (isWidgetRoute(req.path)) {
      res.vary('Origin');
      const origin = req.get('Origin');
      const allowed = origin !== undefined && allowedOrigins().has(origin);
      if (allowed) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      }
      if (req.method === 'OPTIONS') {
        if (!allowed) {
          next(
            new HttpError(
              403,
              'forbidden',
              'Only the ServicePay widget hosts may call this route from a browser.',
            ),
          );
          return;
        }
        res.setHeader('Access-Control-Allow-Methods', PREFLIGHT.allowMethods);
        res.setHeader('Access-Control-Allow-Headers', PREFLIGHT.allowHeaders);
        res.setHeader('Access-Control-Max-Age', String(PREFLIGHT.maxAgeSeconds));
        res.status(204).end();
        return;
      }
    }
    if (req.method === 'OPTIONS') {
      next(new HttpError(404, 'route_not_found', `No route OPTIONS ${req.path}.`));
      return;
    }
    next();
  };
}
