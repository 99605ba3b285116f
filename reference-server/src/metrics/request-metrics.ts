import type { RequestHandler } from 'express';
import { recording, requestAnswered } from './metrics.ts';

/**
 * Records each API answer (`servicepay_http_request_duration_seconds`, and `servicepay_rate_limited_total` for
 * a 429) when it has been sent, labelled by the express route pattern the request matched (`req.route.path`
 * under its router's mount path), or `unmatched`: never by the raw URL, whose ids would make a label without
 * bound. With metrics off it adds nothing to a request but one test.
 *
 * @example
 * app.use(requestMetrics);
 */
export const requestMetrics: RequestHandler = (req, res, next) => {
  if (!recording()) return next();
  const started = performance.now();
  res.once('finish', () => {
    const pattern = req.route?.path;
    const route = typeof pattern === 'string' ? `${req.baseUrl}${pattern}` : 'unmatched';
    requestAnswered(req.method, route, res.statusCode, (performance.now() - started) / 1000);
  });
  next();
};
