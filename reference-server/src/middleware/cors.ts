import type { RequestHandler } from 'express';
import { HttpError } from '../errors.ts';

/** The routes the checkout calls from the widget host's origin (or the sandboxed frame's opaque `null`). */
const WIDGET_ROUTE = /^\/api\/widget\/(bootstrap|profile|sessions\/[^/]+\/(events|accounts|cancel))\/?$/;

/**
 * CORS for the checkout's routes only. They are authorised by a bearer token (widget token, client secret,
 * publishable key), never by cookies, so any origin may call them. The secret-key API sends no CORS headers:
 * browsers must not call it, and a preflight for it answers 404 like any unknown route.
 */
export const widgetCors: RequestHandler = (req, res, next) => {
  if (WIDGET_ROUTE.test(req.path)) {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader(
      'Access-Control-Expose-Headers',
      'Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
    );
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Last-Event-ID');
      res.setHeader('Access-Control-Max-Age', '600');
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
