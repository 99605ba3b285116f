import express, { type RequestHandler } from 'express';
import { HttpError } from '../errors.ts';
import { safeEqual } from '../internal/random.ts';
import { refuseOversizedBody } from '../middleware/json-body.ts';
import type { Edge } from '../routes/mount-operations.ts';
import type { AnyOperation } from '../routes/operation.ts';
import type { PortalServices } from '../routes/portal-deps.ts';
import {
  assertCsrfToken,
  assertSameOrigin,
  assertSessionEnvironment,
  portalContext,
  readCookies,
  requirePortalSession,
  SIGN_IN_COOKIE,
} from './portal-auth.ts';

/** The largest form the portal reads. */
const FORM_LIMIT_BYTES = 16 * 1024;

/** Only form posts reach the portal's handlers; anything else is refused before it is read. */
const requireForm: RequestHandler = (req, _res, next) => {
  if (req.method !== 'POST') return next();
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is('application/x-www-form-urlencoded')) {
    return next(new HttpError(415, 'unsupported_media_type', 'The portal takes its own forms only.'));
  }
  next();
};

const sameOrigin: RequestHandler = (req, _res, next) => {
  assertSameOrigin(req);
  next();
};

/** Same origin, a url-encoded form (one announced over its limit refused before it is read), read. */
const form: RequestHandler[] = [
  sameOrigin,
  requireForm,
  refuseOversizedBody(FORM_LIMIT_BYTES),
  express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: 50 }),
];

/** The sign-in form echoes the token of the sign-in cookie this browser got with the form (double submit). */
const signInToken: RequestHandler = (req, _res, next) => {
  const expected = readCookies(req).get(SIGN_IN_COOKIE);
  const sent = (req.body as Record<string, unknown> | undefined)?._csrf;
  if (!expected || typeof sent !== 'string' || !safeEqual(sent, expected)) {
    throw new HttpError(403, 'forbidden', 'This sign-in form has expired. Reload the page and try again.');
  }
  next();
};

/** The session's token: a post from anywhere else changes nothing. */
const csrf: RequestHandler = (req, res, next) => {
  assertCsrfToken((req.body as Record<string, unknown> | undefined)?._csrf, portalContext(res).csrfToken);
  next();
};

/**
 * A signed-in page or form names no environment but the session's. It runs after the CSRF check, so a forged
 * post meets that refusal first.
 */
const sameEnvironment: RequestHandler = (req, res, next) => {
  assertSessionEnvironment(req, portalContext(res));
  next();
};

/**
 * The error statuses the checks of a portal operation's auth answer (see `portalEdge`), declared beside them;
 * the document adds them. A form: not from the portal's origin, a stale CSRF or sign-in token, another
 * environment (403), too large (413), not url-encoded (415). A signed-in page: another environment (403; not
 * signed in is a 303 to sign-in).
 *
 * @example
 * portalGuardStatuses({ auth: 'portalSession', method: 'post' }); // [403, 413, 415]
 */
export function portalGuardStatuses(operation: Pick<AnyOperation, 'auth' | 'method'>): readonly number[] {
  if (operation.auth === 'portalSignIn') return [403, 413, 415];
  if (operation.auth !== 'portalSession') return [];
  return operation.method === 'post' ? [403, 413, 415] : [403];
}

/**
 * How the portal's operations are mounted: the checks of each one's `auth` (see `PortalAuthKind`), in order,
 * before its handler, and the signed-in `PortalContext` as the caller of a `portalSession` operation.
 *
 * @example
 * mountOperations(router, PORTAL_OPERATIONS, portalEdge(services), '/portal');
 */
export function portalEdge(services: PortalServices): Edge<PortalServices> {
  const signedIn = requirePortalSession(services.store, services.clock, services.portalSessions);
  // Their statuses: `portalGuardStatuses`.
  const guards = (operation: AnyOperation): RequestHandler[] => {
    const posted = operation.method === 'post';
    switch (operation.auth) {
      case 'portalPublic':
        return [];
      case 'portalSignIn':
        return [...form, signInToken];
      case 'portalSession':
        return posted ? [...form, signedIn, csrf, sameEnvironment] : [signedIn, sameEnvironment];
      default:
        throw new Error(`${operation.operationId}: ${operation.auth} is not an auth of the portal`);
    }
  };
  return {
    guards,
    callerOf: (operation, res) => (operation.auth === 'portalSession' ? portalContext(res) : undefined),
    handlers: services,
  };
}
