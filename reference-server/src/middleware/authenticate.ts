import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_PATTERN, EnvironmentSchema } from '@servicepay/node/protocol';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { ApiKeyWithOwner } from '../db/api-keys.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import { newRequestId, sha256 } from '../internal/random.ts';
import type { LimitDecision, RateLimiter } from '../internal/sliding-window-limiter.ts';
import { refusedEarly } from '../metrics/metrics.ts';
import { refuseCredentialInUrl } from './credential-in-url.ts';
import { addressKey, answerRateLimited, enforceLimit, withinLimit } from './rate-limit.ts';
import { RefusalMemo } from './refusal-memo.ts';
import { setRequestContext } from './request-context.ts';
import type { RequestLog } from './request-log.ts';
import type { WidgetCaller } from './widget-caller.ts';

// The widget's caller is typed below this module and the request context (both use it); re-exported for the routes.
export type { WidgetCaller } from './widget-caller.ts';

export interface AuthDeps {
  store: Store;
  clock: Clock;
  /** 150 per rolling minute per business and environment: secret-key calls only. */
  businessLimiter: RateLimiter;
  /**
   * The checkout's budget per client address: publishable-key calls and widget-token calls count here (and
   * bootstrap, through `rateLimitByAddress`), never against the merchant's secret-key budget, because a
   * publishable key and a widget token are in every payer's browser.
   */
  checkoutLimiter: RateLimiter;
  /** Failed authentications per address, to slow down key guessing. */
  failedAuthLimiter: RateLimiter;
  /** Where each request made with a business's API key is logged for its portal (none: nothing logged). */
  requestLog?: RequestLog;
}

// Who is calling and the ownership rule live with the businesses (the services use them without HTTP);
// re-exported here for the routes, which take them with the rest of authentication.
export { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';

const WIDGET_TOKEN_PATTERN = /^wt_[0-9A-Za-z]{32}$/;

// The caller each guard sets, read by the handlers through the request context.
export { apiCaller, widgetCaller } from './request-context.ts';

/** The bearer token, or a 401 that says what is wrong with the header. */
function bearerToken(req: Request): string {
  const header = req.headers.authorization;
  if (header === undefined || header === '') {
    throw new HttpError(
      401,
      'authentication_required',
      'Send your secret key as Authorization: Bearer sk_...',
    );
  }
  const match = /^Bearer ([^\s]{1,200})$/.exec(header);
  if (!match?.[1])
    throw new HttpError(401, 'invalid_api_key', 'The Authorization header must be "Bearer <key>".');
  return match[1];
}

/** Counts a failed authentication against the address; returns `error` to throw (or throws the 429). */
async function failure(deps: AuthDeps, req: Request, res: Response, error: HttpError): Promise<HttpError> {
  // Count the failure against the address before answering, so guessing keys slows down to 429s.
  const decision = await deps.failedAuthLimiter.hit(`auth-failure:${addressKey(req)}`, deps.clock.now());
  if (!decision.allowed) enforceLimit(res, decision);
  return error;
}

/**
 * The key the over-budget check already looked up for a request, so authenticating it reads the key once.
 * Keyed by the request object, which is the same for `node:http` and express (express at most sets its prototype).
 */
const earlyLookups = new WeakMap<IncomingMessage, { token: string; found: ApiKeyWithOwner | undefined }>();

/** What the over-budget check needs: the key lookup and the business budget, only asked (`peek`). */
export type BudgetDeps = Pick<AuthDeps, 'store' | 'clock' | 'businessLimiter'>;

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
  const found = await deps.store.apiKeys.findWithOwner(hash);
  earlyLookups.set(req, { token, found });
  if (!found || found.key.revokedAt !== null || found.key.kind !== 'secret') return undefined;
  const budget = `${found.business.id}:${found.key.environment}`;
  // On PostgreSQL what this instance already knows, without a round trip (`peekKnown`); the request's own `hit`
  // confirms it.
  const decision =
    deps.businessLimiter.peekKnown?.(budget, now) ?? (await deps.businessLimiter.peek(budget, now));
  if (decision.allowed) return undefined;
  memo.remember(memoKey, budget, now + OVER_BUDGET_MEMO_MS);
  return decision;
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

/** Looks the key up by its hash; 401 for anything that is not a live key of a business. */
async function identifyKey(deps: AuthDeps, req: Request, res: Response, token: string): Promise<ApiCaller> {
  if (token.startsWith('cs_')) {
    throw await failure(
      deps,
      req,
      res,
      new HttpError(
        401,
        'client_secret_not_a_credential',
        'A client secret (cs_...) only opens the checkout widget; call the API with your secret key (sk_...).',
      ),
    );
  }
  if (!API_KEY_PATTERN.test(token)) {
    throw await failure(
      deps,
      req,
      res,
      new HttpError(401, 'invalid_api_key', 'That is not a ServicePay API key.'),
    );
  }
  // Asked for every request, and answered as committed now: a key rolled by this process or by the CLI on the
  // same file stops at once (on SQLite a remembered key is checked against a change counter first:
  // `ApiKeyRepository.findWithOwner`). Within one request, refuseOverBudget's lookup of the same token is that one.
  const early = earlyLookups.get(req);
  const found =
    early && early.token === token ? early.found : await deps.store.apiKeys.findWithOwner(sha256(token));
  if (!found) throw await failure(deps, req, res, new HttpError(401, 'invalid_api_key', 'No such API key.'));
  const { key, business } = found;
  // From here the request is the business's: its portal's request log shows it, refusals included.
  deps.requestLog?.track(req, res, { businessId: business.id, environment: key.environment, key });
  if (key.revokedAt !== null) {
    throw await failure(
      deps,
      req,
      res,
      new HttpError(401, 'api_key_revoked', 'This API key was rolled and no longer works; use the new one.'),
    );
  }
  return { kind: key.kind, business, environment: key.environment };
}

/**
 * Spends the caller's budget; false when it is spent (429 already answered). The business's budget counts its
 * secret key only: a publishable key is public (spec §2), so anyone could otherwise spend the merchant's budget
 * with it and lock the merchant's own server out. Publishable-key calls, refused ones included, count against
 * the calling address's checkout budget instead.
 */
async function spendBudget(deps: AuthDeps, req: Request, res: Response, caller: ApiCaller): Promise<boolean> {
  const now = deps.clock.now();
  return caller.kind === 'secret'
    ? withinLimit(res, await deps.businessLimiter.hit(`${caller.business.id}:${caller.environment}`, now))
    : withinLimit(res, await deps.checkoutLimiter.hit(`checkout:${addressKey(req)}`, now));
}

/** Checks everything after the budget was spent: key kind, KYC, the `environment` parameter. */
function admit(req: Request, caller: ApiCaller, allowPublishable: boolean): void {
  if (caller.kind === 'publishable' && !allowPublishable) {
    throw new HttpError(
      403,
      'publishable_key_not_allowed',
      'Publishable keys (pk_...) only initialise the widget; use your secret key (sk_...) on the server.',
    );
  }
  if (caller.environment === 'live' && !caller.business.kycApproved) {
    throw new HttpError(403, 'kyc_required', 'Live keys work once your business has passed KYC review.');
  }
  const requested = req.query.environment;
  if (requested !== undefined) {
    const parsed = EnvironmentSchema.safeParse(requested);
    if (!parsed.success) {
      throw new HttpError(400, 'validation_failed', 'environment must be "test" or "live".', [
        { path: 'environment', message: 'must be "test" or "live"' },
      ]);
    }
    if (parsed.data !== caller.environment) {
      throw new HttpError(
        403,
        'environment_mismatch',
        `This is a ${caller.environment} key; it only reaches the ${caller.environment} environment.`,
      );
    }
  }
}

/** Secret key (or, where allowed, publishable key) of a business. */
export function requireApiKey(deps: AuthDeps, options: { allowPublishable?: boolean } = {}): RequestHandler {
  return async (req, res, next) => {
    const caller = await identifyKey(deps, req, res, bearerToken(req));
    if (!(await spendBudget(deps, req, res, caller))) return;
    admit(req, caller, options.allowPublishable ?? false);
    setRequestContext(res, { caller });
    next();
  };
}

/**
 * The session a widget token opens. The calling address's checkout budget is spent first, whatever the token:
 * the token routes face any browser, and a flood of cancels or stream opens must meet 429. A token
 * past its `expiresAt` (the end of its session's lifetime) answers 401 `widget_token_expired`.
 */
async function identifyWidget(
  deps: AuthDeps,
  req: Request,
  res: Response,
  token: string,
): Promise<WidgetCaller | undefined> {
  const now = deps.clock.now();
  if (!withinLimit(res, await deps.checkoutLimiter.hit(`checkout:${addressKey(req)}`, now))) return undefined;
  if (!WIDGET_TOKEN_PATTERN.test(token)) {
    if (token.startsWith('cs_')) {
      throw await failure(
        deps,
        req,
        res,
        new HttpError(
          401,
          'client_secret_not_a_credential',
          'Exchange the client secret at POST /api/widget/bootstrap and use the widget token it returns.',
        ),
      );
    }
    throw await failure(
      deps,
      req,
      res,
      new HttpError(401, 'invalid_widget_token', 'That is not a widget token.'),
    );
  }
  const record = await deps.store.widgetTokens.findByHash(sha256(token));
  const session = record && (await deps.store.sessions.find(record.sessionId));
  if (!record || !session)
    throw await failure(deps, req, res, new HttpError(401, 'invalid_widget_token', 'No such widget token.'));
  if (session.id !== req.params.id) {
    throw new HttpError(403, 'forbidden', 'This widget token belongs to another session.');
  }
  if (record.expiresAt <= now) {
    throw new HttpError(
      401,
      'widget_token_expired',
      'This checkout has ended; ask the merchant for a new payment session.',
    );
  }
  return { kind: 'widget', session, tokenHash: record.tokenHash.toString('hex') };
}

/**
 * The widget token of the session named in the path, from `Authorization` only: a credential in the URL is
 * refused first (`refuseCredentialInUrl`).
 */
export function requireWidgetToken(deps: AuthDeps): RequestHandler {
  return async (req, res, next) => {
    refuseCredentialInUrl(req);
    const caller = await identifyWidget(deps, req, res, bearerToken(req));
    if (!caller) return; // 429 answered
    setRequestContext(res, { caller });
    next();
  };
}

/**
 * Either the owning business's secret key or the session's widget token (cancel: merchant or payer). A widget-
 * token route, so a credential in the URL is refused first, whichever credential the header carries.
 */
export function requireApiKeyOrWidgetToken(deps: AuthDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    refuseCredentialInUrl(req);
    const token = bearerToken(req);
    if (token.startsWith('wt_')) {
      const caller = await identifyWidget(deps, req, res, token);
      if (!caller) return; // 429 answered
      setRequestContext(res, { caller });
    } else {
      const caller = await identifyKey(deps, req, res, token);
      if (!(await spendBudget(deps, req, res, caller))) return;
      admit(req, caller, false);
      setRequestContext(res, { caller });
    }
    next();
  };
}
