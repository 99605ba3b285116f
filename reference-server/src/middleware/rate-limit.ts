import type { RequestHandler, Response } from 'express';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import type { LimitDecision, SlidingWindowLimiter } from '../internal/sliding-window-limiter.ts';

/** Sets the `RateLimit-*` headers; throws 429 with `Retry-After` when the decision says no. */
export function enforceLimit(res: Response, decision: LimitDecision): void {
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) {
    throw new HttpError(
      429,
      'rate_limited',
      'Too many requests. Wait for Retry-After seconds, then retry.',
      undefined,
      {
        'Retry-After': String(decision.resetSeconds),
      },
    );
  }
}

/** The limit of the unauthenticated widget and bank-counter routes: per client address. */
export function rateLimitByAddress(limiter: SlidingWindowLimiter, clock: Clock): RequestHandler {
  return (req, res, next) => {
    enforceLimit(res, limiter.hit(`address:${req.ip ?? 'unknown'}`, clock.now()));
    next();
  };
}
