import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_PATTERN } from '@servicepay/node/protocol';
import type { RequestHandler } from 'express';
import type { ApiKeyWithOwner } from '../db/api-keys.ts';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import { newRequestId, sha256 } from '../internal/random.ts';
import type { LimitDecision, RateLimiter } from '../internal/sliding-window-limiter.ts';
import { refusedEarly } from '../metrics/metrics.ts';
import { budgetOf, earlyLookups, lookUpKey } from './key-lookup.ts';
import { answerRateLimited, withinLimit } from './rate-limit.ts';
import { RefusalMemo } from './refusal-memo.ts';

// The 429 to a business over its budget, decided before the JSON body is read: in the server's request listener
// (refuseOverBudgetEarly) or first in express (refuseOverBudget). Split from authenticate.ts, which spends the
// budget; both share the request's key lookup (key-lookup.ts).

/** What the over-budget check needs: the key lookup and the business budget, only asked (`peek`). */
export interface BudgetDeps {
  store: Store;
  clock: Clock;
  /** The business budget `requireApiKey` spends (`AuthDeps.businessLimiter`). */
  businessLimiter: RateLimiter;
}

/** How long a key found over its business's budget is refused again without reading it (`RefusalMemo`). */
export const OVER_BUDGET_MEMO_MS = 1_000;

/** The refusals of each business budget (one per service: a test process may run several). */
const refusalMemos = new WeakMap<RateLimiter, RefusalMemo>();

function refusalMemoOf(limiter: RateLimiter): RefusalMemo {
  let memo = refusalMemos.get(limiter);
  if (memo === undefined) {
    memo = new RefusalMemo();
    refusalMemos.set(limiter, memo);
  }
  return memo;
}

/**
 * The one over-budget decision, for both places that make it: the refusal when the request carries a live
 * secret key of a business over its budget, undefined otherwise (go on to the usual checks). The lookup is
 * remembered for the request either way; a key refused less than `OVER_BUDGET_MEMO_MS` ago is refused again
 * from its `RefusalMemo` while its budget stays spent, without reading it.
 */
async function overBudget(deps: BudgetDeps, req: IncomingMessage): Promise<LimitDecision | undefined> {
  const header = req.headers.authorization;
  if (header === undefined || !header.startsWith('Bearer sk_')) return undefined;
  const token = header.slice('Bearer '.length);
  if (!API_KEY_PATTERN.test(token)) return undefined;
  const hash = sha256(token);
  const memoKey = hash.toString('hex');
  const now = deps.clock.now();
  const memo = refusalMemoOf(deps.businessLimiter);
  const refusedBy = memo.recall(memoKey, now);
  if (refusedBy !== undefined) {
    const decision = await deps.businessLimiter.peek(refusedBy, now);
    if (!decision.allowed) return decision;
    memo.forget(memoKey);
  }
  // On PostgreSQL what this instance already knows, without a round trip (`peekKnown`); the request's own `hit`
  // confirms it.
  const refusalOf = async (found: ApiKeyWithOwner | undefined) => {
    const budget = budgetOf(found);
    if (budget === undefined) return undefined;
    const decision =
      deps.businessLimiter.peekKnown?.(budget, now) ?? (await deps.businessLimiter.peek(budget, now));
    return decision.allowed ? undefined : { budget, decision };
  };
  let lookup = await lookUpKey(deps.store, token, hash);
  earlyLookups.set(req, lookup);
  let refusal = await refusalOf(lookup.found);
  if (refusal && lookup.unconfirmedAt !== undefined) {
    // A refusal is answered here, before the hit that would confirm a key from memory: read the key first, so a
    // key rolled meanwhile is answered 401 by express, not 429 (once: the memo answers the next ones).
    lookup = { token, found: await deps.store.apiKeys.findWithOwner(hash) };
    earlyLookups.set(req, lookup);
    refusal = await refusalOf(lookup.found);
  }
  if (refusal === undefined) return undefined;
  memo.remember(memoKey, refusal.budget, now + OVER_BUDGET_MEMO_MS);
  return refusal.decision;
}

/**
 * Whether the server may answer this request before express: a path under `/api/` that no express middleware
 * before the check would answer or decorate differently. Not `OPTIONS` (the CORS middleware answers those),
 * and not the checkout's routes under `/api/widget/` (CORS headers, `Vary: Origin`), which express still
 * refuses with `refuseOverBudget`; `/api/widget/sessions` itself (create and list) is not a checkout route.
 */
function answerableEarly(req: IncomingMessage): boolean {
  const url = req.url;
  if (url === undefined || !url.startsWith('/api/') || req.method === 'OPTIONS') return false;
  if (!url.startsWith('/api/widget/')) return true;
  return url === '/api/widget/sessions' || url.startsWith('/api/widget/sessions?');
}

/**
 * Answers 429 in the server's request listener, before express sees the request, to a request on `/api/`
 * whose secret key is live and whose business is over its budget: the decision `requireApiKey` would reach,
 * made without routing, middleware or a body the answer will not use (the body is not read; Node discards it
 * and the connection stays open). Returns true when it answered. A key that is unknown, revoked or not a
 * secret key goes on to express and the usual checks (401, 403, or the checkout budget). Nothing is counted
 * here (`peek`): the request spends its budget once, where its route authenticates it, reusing this lookup.
 *
 * @example
 * createApiServer(app, { ...timeouts, beforeApp: refuseOverBudgetEarly({ store, clock, businessLimiter }) });
 */
export function refuseOverBudgetEarly(
  deps: BudgetDeps,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return async (req, res) => {
    if (!answerableEarly(req)) return false;
    const decision = await overBudget(deps, req);
    if (decision === undefined) return false;
    answerRateLimited(res, decision, newRequestId());
    refusedEarly();
    return true;
  };
}

/**
 * The same refusal inside express, before the JSON parser, for what the server did not already decide: the
 * checkout's routes (so the 429 carries their CORS headers) and an app served without `createApiServer`.
 *
 * @example
 * app.use(refuseOverBudget(auth));
 * app.use(jsonBody(limit));
 */
export function refuseOverBudget(deps: BudgetDeps): RequestHandler {
  return async (req, res, next) => {
    // Already asked by refuseOverBudgetEarly (and let through), or no secret key to ask about.
    if (earlyLookups.has(req) || !req.path.startsWith('/api/')) return next();
    const decision = await overBudget(deps, req);
    if (decision === undefined) return next();
    withinLimit(res, decision);
  };
}
