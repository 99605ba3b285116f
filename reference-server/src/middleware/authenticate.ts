import { API_KEY_PATTERN, EnvironmentSchema } from '@servicepay/node/protocol';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { ApiKeyWithOwner } from '../db/api-keys.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import { sha256 } from '../internal/random.ts';
import type { LimitDecision, RateLimiter } from '../internal/sliding-window-limiter.ts';
import { refuseCredentialInUrl } from './credential-in-url.ts';
import { earlyLookups, lookUpKey } from './key-lookup.ts';
import { addressKey, enforceLimit, withinLimit } from './rate-limit.ts';
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

/** A caller identified by its key; `unconfirmedAt` as in `KeyLookup` (the key came from memory). */
interface IdentifiedCaller {
  caller: ApiCaller;
  unconfirmedAt?: number;
}

/** Looks the key up by its hash; 401 for anything that is not a live key of a business. */
async function identifyKey(
  deps: AuthDeps,
  req: Request,
  res: Response,
  token: string,
): Promise<IdentifiedCaller> {
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
  // `ApiKeyRepository.findWithOwner`; on PostgreSQL one from memory is confirmed by the budget's hit, see
  // `keyCaller`). Within one request, refuseOverBudget's lookup of the same token is that one.
  const early = earlyLookups.get(req);
  const lookup = early && early.token === token ? early : await lookUpKey(deps.store, token, sha256(token));
  const caller = await callerOf(deps, req, res, lookup.found, { track: true });
  return lookup.unconfirmedAt === undefined ? { caller } : { caller, unconfirmedAt: lookup.unconfirmedAt };
}

/**
 * The caller a key found (or not) makes: 401 for no key or a revoked one. `track` puts the request in the
 * business's request log (once per request).
 */
async function callerOf(
  deps: AuthDeps,
  req: Request,
  res: Response,
  found: ApiKeyWithOwner | undefined,
  { track }: { track: boolean },
): Promise<ApiCaller> {
  if (!found) throw await failure(deps, req, res, new HttpError(401, 'invalid_api_key', 'No such API key.'));
  const { key, business } = found;
  // From here the request is the business's: its portal's request log shows it, refusals included.
  if (track) deps.requestLog?.track(req, res, { businessId: business.id, environment: key.environment, key });
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
 * Spends the caller's budget and answers its decision. The business's budget counts its secret key only: a
 * publishable key is public (spec §2), so anyone could otherwise spend the merchant's budget with it and lock
 * the merchant's own server out. Publishable-key calls, refused ones included, count against the calling
 * address's checkout budget instead.
 */
async function spendBudget(deps: AuthDeps, req: Request, caller: ApiCaller): Promise<LimitDecision> {
  const now = deps.clock.now();
  return caller.kind === 'secret'
    ? deps.businessLimiter.hit(`${caller.business.id}:${caller.environment}`, now)
    : deps.checkoutLimiter.hit(`checkout:${addressKey(req)}`, now);
}

/**
 * The caller of an API key, its budget spent; undefined when the budget is spent (429 answered). A key that came
 * from memory is trusted only if the hit's statement read the credentials version it was remembered at; else
 * (a key or a business changed since, or the limiter counts in memory and read none) it is read as committed
 * now, before anything is answered. Same key, so same business and budget: it may now be revoked (401) or its
 * business approved.
 */
async function keyCaller(
  deps: AuthDeps,
  req: Request,
  res: Response,
  token: string,
): Promise<ApiCaller | undefined> {
  const identified = await identifyKey(deps, req, res, token);
  let caller = identified.caller;
  const decision = await spendBudget(deps, req, caller);
  if (identified.unconfirmedAt !== undefined && decision.credentialsVersion !== identified.unconfirmedAt) {
    const found = await deps.store.apiKeys.findWithOwner(sha256(token));
    caller = await callerOf(deps, req, res, found, { track: false });
  }
  return withinLimit(res, decision) ? caller : undefined;
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
    const caller = await keyCaller(deps, req, res, bearerToken(req));
    if (!caller) return; // 429 answered
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
      const caller = await keyCaller(deps, req, res, token);
      if (!caller) return; // 429 answered
      admit(req, caller, false);
      setRequestContext(res, { caller });
    }
    next();
  };
}
