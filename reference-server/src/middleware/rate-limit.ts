import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import { addressKeyOf } from '../internal/peer-address.ts';
import type { LimitDecision, RateLimiter } from '../internal/sliding-window-limiter.ts';
import { errorEnvelopeText, sendErrorEnvelope } from './envelope.ts';

const RATE_LIMITED_MESSAGE = 'Too many requests. Wait for Retry-After seconds, then retry.';

function setLimitHeaders(res: ServerResponse, decision: LimitDecision): void {
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
}

/**
 * Sets the `RateLimit-*` headers; when the decision says no, answers 429 `rate_limited` with `Retry-After`
 * itself and returns false (the caller stops there). No error is thrown: a client over its budget may send
 * thousands of requests a second, and each refusal should cost a fraction of the work it refuses.
 *
 * @example
 * if (!withinLimit(res, limiter.hit(key, clock.now()))) return;
 */
export function withinLimit(res: Response, decision: LimitDecision): boolean {
  setLimitHeaders(res, decision);
  if (decision.allowed) return true;
  res.setHeader('Retry-After', String(decision.resetSeconds));
  sendErrorEnvelope(res, 429, 'rate_limited', RATE_LIMITED_MESSAGE);
  return false;
}

/**
 * The 429 of `withinLimit` written on a bare `node:http` response, for a request refused before express sees it
 * (`refuseOverBudgetEarly`): the same status, envelope and headers as express's answer (`Request-Id`,
 * `Cache-Control: no-store`, `RateLimit-*`, `Retry-After`), in one write. The request body is not read: Node
 * discards what is left of it once the answer is written, so the connection stays usable (keep-alive).
 *
 * @example
 * if (!decision.allowed) answerRateLimited(res, decision, newRequestId());
 */
export function answerRateLimited(res: ServerResponse, decision: LimitDecision, requestId: string): void {
  const text = errorEnvelopeText(429, 'rate_limited', RATE_LIMITED_MESSAGE, requestId);
  // Header for header in the order express's answer sets them.
  res.statusCode = 429;
  res.setHeader('Request-Id', requestId);
  res.setHeader('Cache-Control', 'no-store');
  setLimitHeaders(res, decision);
  res.setHeader('Retry-After', String(decision.resetSeconds));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * Sets the `RateLimit-*` headers; throws 429 with `Retry-After` when the decision says no. For a check made deep
 * inside one that throws its own refusal anyway (failed authentication); elsewhere `withinLimit` answers.
 *
 * @example
 * if (!decision.allowed) enforceLimit(res, decision); // throws the 429
 */
export function enforceLimit(res: Response, decision: LimitDecision): void {
  setLimitHeaders(res, decision);
  if (!decision.allowed) {
    throw new HttpError(429, 'rate_limited', RATE_LIMITED_MESSAGE, undefined, {
      'Retry-After': String(decision.resetSeconds),
    });
  }
}

/**
 * The client address a per-address limit counts by: the socket's peer, or, behind the load balancers listed in
 * `trustedProxies`, the address the nearest untrusted hop gave in `X-Forwarded-For` (express `trust proxy`
 * with exactly that list, so a client cannot choose it by writing the header itself). IPv6 clients count by
 * their /64, since one host commonly holds a whole /64 and could otherwise take a fresh budget per address.
 *
 * @example
 * limiter.hit(`checkout:${addressKey(req)}`, clock.now());
 */
export function addressKey(req: Request): string {
  return addressKeyOf(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

/**
 * The checkout's per-address budget on routes without a key (bootstrap, the bank counter). The same budget is
 * spent by publishable-key and widget-token calls in `authenticate.ts`.
 *
 * @example
 * router.post('/api/widget/bootstrap', rateLimitByAddress(limiters.widget, clock), handler);
 */
export function rateLimitByAddress(limiter: RateLimiter, clock: Clock): RequestHandler {
  return async (req, res, next) => {
    if (withinLimit(res, await limiter.hit(`checkout:${addressKey(req)}`, clock.now()))) next();
  };
}
