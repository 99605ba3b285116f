import { createHmac } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { PortalContext, PortalSessions } from '../businesses/portal-sessions.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import { randomBase62, safeEqual, sha256 } from '../internal/random.ts';

/** The portal session cookie: a random id, stored only as its hash. */
export const SESSION_COOKIE = 'sp_portal';
/** Before sign-in: the token the sign-in form must echo (double submit), so a site cannot sign you in as itself. */
export const SIGN_IN_COOKIE = 'sp_portal_signin';
/** A portal session ends 8 hours after sign-in, or after 1 hour without a request. */
export const SESSION_LIFETIME_MS = 8 * 3_600_000;
export const SESSION_IDLE_MS = 3_600_000;
/** `last_seen_at` is written at most this often, so reading pages does not write on every request. */
const TOUCH_EVERY_MS = 60_000;

export type { PortalContext };

/**
 * The signed-in context of a portal request (set by `requirePortalSession`).
 *
 * @example
 * const { business, environment } = portalContext(res);
 */
export function portalContext(res: Response): PortalContext {
  const context = signedInContext(res);
  if (!context) throw new Error('portalContext read on a route without requirePortalSession');
  return context;
}

/** What this module keeps in express's `res.locals`: the one place the portal's field is given its type. */
const portalLocals = (res: Response): { portal?: PortalContext } => res.locals as { portal?: PortalContext };

/**
 * The signed-in context of a portal request, or undefined where none was set (a signed-out page, or an error
 * raised before `requirePortalSession` ran).
 *
 * @example
 * const context = signedInContext(res); // the error page shows the tabs only when signed in
 */
export const signedInContext = (res: Response): PortalContext | undefined => portalLocals(res).portal;

/**
 * Cookies of a request, by name (first value wins); values are not decoded (ours are base62).
 *
 * @example
 * readCookies(req).get(SESSION_COOKIE); // the raw id, or undefined
 */
export function readCookies(req: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index <= 0) continue;
    const name = part.slice(0, index).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(index + 1).trim());
  }
  return cookies;
}

/**
 * `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's request carries it), `Path=/portal` (the
 * API never sees it), `Secure` when served over HTTPS.
 *
 * @example
 * setPortalCookie(req, res, SESSION_COOKIE, newCookieId(), SESSION_LIFETIME_MS);
 */
export function setPortalCookie(
  req: Request,
  res: Response,
  name: string,
  value: string,
  maxAgeMs: number,
): void {
  const attributes = [
    `${name}=${value}`,
    'Path=/portal',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.floor(maxAgeMs / 1000)}`,
  ];
  if (req.secure) attributes.push('Secure');
  res.append('Set-Cookie', attributes.join('; '));
}

export const clearPortalCookie = (req: Request, res: Response, name: string) =>
  setPortalCookie(req, res, name, '', 0);

/**
 * The CSRF token of a session: an HMAC of the cookie's id, so nothing more is stored and it dies with it.
 *
 * @example
 * html`<input type="hidden" name="_csrf" value="${csrfTokenFor(cookieId)}">`;
 */
export const csrfTokenFor = (cookieId: string): string =>
  createHmac('sha256', cookieId).update('servicepay-portal-csrf').digest('base64url');

const COOKIE_ID = /^[0-9A-Za-z]{32}$/;

export const newCookieId = (): string => randomBase62(32);

/**
 * The portal session of this request, or undefined (no cookie, unknown, expired or idle too long).
 *
 * @example
 * if (await findPortalSession(store, clock, req)) res.redirect(303, '/portal/sessions');
 */
export async function findPortalSession(
  store: Store,
  clock: Clock,
  req: Request,
): Promise<(PortalContext & { lastSeenAt: number }) | undefined> {
  const cookieId = readCookies(req).get(SESSION_COOKIE);
  if (!cookieId || !COOKIE_ID.test(cookieId)) return undefined;
  const idHash = sha256(cookieId);
  const record = await store.portalSessions.find(idHash);
  if (!record) return undefined;
  const now = clock.now();
  if (record.expiresAt <= now || record.lastSeenAt + SESSION_IDLE_MS <= now) return undefined;
  // The key that opened the session was rolled (perhaps because it leaked): the session ends with it.
  if (record.keyRevokedAt !== null) return undefined;
  const business = await store.businesses.find(record.businessId);
  if (!business) return undefined;
  return {
    business,
    environment: record.environment,
    idHash,
    csrfToken: csrfTokenFor(cookieId),
    apiKeyId: record.apiKeyId,
    lastSeenAt: record.lastSeenAt,
  };
}

/**
 * Signed-in pages: without a live portal session a page redirects to sign-in (a form post answers 403: a
 * redirect would drop what was sent). Keeps the session alive while it is used.
 *
 * @example
 * router.get('/keys', requirePortalSession(store, clock, portalSessions), handler);
 */
export function requirePortalSession(
  store: Store,
  clock: Clock,
  portalSessions: Pick<PortalSessions, 'touch'>,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const found = await findPortalSession(store, clock, req);
    if (!found) {
      if (readCookies(req).has(SESSION_COOKIE)) clearPortalCookie(req, res, SESSION_COOKIE);
      if (req.method === 'GET' || req.method === 'HEAD') {
        res.redirect(303, '/portal/sign-in');
        return;
      }
      throw new HttpError(403, 'forbidden', 'Your portal session has ended. Sign in again.');
    }
    const { lastSeenAt, ...context } = found;
    const now = clock.now();
    if (now - lastSeenAt >= TOUCH_EVERY_MS) {
      await portalSessions.touch(context.idHash);
    }
    portalLocals(res).portal = context;
    next();
  };
}

/**
 * The request came from a portal page of this very server: `Origin` (or, where a browser sends none,
 * `Referer`) must name this server's origin. A cross-site form post fails here even before its token does.
 *
 * @example
 * router.post('/keys/roll', (req, _res, next) => { assertSameOrigin(req); next(); }, handler);
 */
export function assertSameOrigin(req: Request): void {
  const expected = `${req.protocol}://${req.get('host') ?? ''}`;
  const origin = req.get('origin');
  if (origin !== undefined) {
    if (origin === expected) return;
  } else {
    const referer = req.get('referer');
    if (referer !== undefined && (referer === expected || referer.startsWith(`${expected}/`))) return;
  }
  throw new HttpError(
    403,
    'forbidden',
    'This form was not sent from the portal. Reload the page and try again.',
  );
}

/**
 * The form's `_csrf` equals the session's token (constant time).
 *
 * @example
 * assertCsrfToken(req.body._csrf, portalContext(res).csrfToken);
 */
export function assertCsrfToken(sent: unknown, expected: string): void {
  if (typeof sent !== 'string' || !safeEqual(sent, expected)) {
    throw new HttpError(403, 'forbidden', 'This form has expired. Reload the page and try again.');
  }
}

/**
 * A request of a signed-in page or form names no environment but the session's: an `environment` in the query
 * or the form that is anything else is refused (403 `environment_mismatch`), before the handler reads a thing.
 * What the handler then reads and changes is scoped to the session's environment by the services themselves
 * (a live session id or endpoint id answers 403 there), so neither a form field nor a link reaches another
 * environment.
 *
 * @example
 * assertSessionEnvironment(req, portalContext(res)); // throws on ?environment=live in a test session
 */
export function assertSessionEnvironment(req: Request, context: PortalContext): void {
  const named = [
    req.query.environment,
    (req.body as Record<string, unknown> | undefined)?.environment,
  ].flat();
  const other = named.find((value) => value !== undefined && value !== context.environment);
  if (other === undefined) return;
  const wanted = context.environment === 'test' ? 'live' : 'test';
  throw new HttpError(
    403,
    'environment_mismatch',
    `This portal session was opened with a ${context.environment} key, so it shows and changes ${context.environment} data only. To see or change ${wanted} data, sign in with your ${wanted} secret key (sk_${wanted}_…).`,
  );
}
