import { API_KEY_PATTERN, type Environment } from '@servicepay/node/protocol';
import type { RequestHandler } from 'express';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { safeEqual, sha256 } from '../internal/random.ts';
import type { RateLimiter } from '../internal/sliding-window-limiter.ts';
import { addressKey } from '../middleware/rate-limit.ts';
import { SignInFormSchema, SignInQuerySchema, SignOutFormSchema } from './forms.ts';
import { SECTIONS, sendPage } from './layout.ts';
import { type SignInPageOptions, signInPage } from './pages/sign-in-page.ts';
import {
  clearPortalCookie,
  findPortalSession,
  newCookieId,
  portalContext,
  readCookies,
  SESSION_COOKIE,
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  SIGN_IN_COOKIE,
  setPortalCookie,
} from './portal-auth.ts';
import type { PortalRouteName } from './portal-route-table.ts';

/** What signing in and out needs from the service. */
export interface SignInDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Failed sign-ins count here, per address, with the API's failed authentications. */
  failedAuthLimiter: RateLimiter;
}

const RETURN_PATHS = new Set<string>(SECTIONS.map((section) => section.path));

/** A portal section to come back to, never another site; the Sessions page otherwise. */
const returnPath = (asked: string | undefined): string =>
  asked !== undefined && RETURN_PATHS.has(asked) ? asked : '/portal/sessions';

/**
 * The portal's entry, sign-in and sign-out. A sign-in opens a session in the environment of the key pasted; the
 * header's "Test data / Live data" switch leads to the sign-in page asking for the other environment's secret
 * key, and signing in with it replaces the browser's session (a session never changes environment).
 *
 * @example
 * const handlers = signInHandlers({ store, clock, logger, failedAuthLimiter });
 * router.post('/sign-in', handlers.signIn);
 */
export function signInHandlers(
  deps: SignInDeps,
): Pick<Record<PortalRouteName, RequestHandler>, 'home' | 'signInPage' | 'signIn' | 'signOut'> {
  const { store, clock, logger } = deps;
  return {
    home: async (req, res) => {
      res.redirect(
        303,
        (await findPortalSession(store, clock, req)) ? '/portal/sessions' : '/portal/sign-in',
      );
    },

    signInPage: async (req, res) => {
      const query = SignInQuerySchema.safeParse(req.query);
      const asked = query.success ? query.data : {};
      const back = returnPath(asked.returnTo);
      const current = await findPortalSession(store, clock, req);
      // Signed in to the environment asked for (or to any, when none is): nothing to do here.
      if (current && (asked.environment === undefined || asked.environment === current.environment)) {
        return res.redirect(303, back);
      }
      const token = newCookieId();
      setPortalCookie(req, res, SIGN_IN_COOKIE, token, SESSION_IDLE_MS);
      sendPage(
        res,
        signInPage(token, {
          status: req.query.signedOut === '1' ? 'You are signed out.' : undefined,
          environment: asked.environment,
          signedInTo: current?.environment,
          returnTo: asked.returnTo === undefined ? undefined : back,
        }),
      );
    },

    signIn: async (req, res) => {
      const expected = readCookies(req).get(SIGN_IN_COOKIE);
      const body = (req.body ?? {}) as Record<string, unknown>;
      // Double submit: the form must echo the token of the sign-in cookie this browser got with the form.
      if (!expected || typeof body._csrf !== 'string' || !safeEqual(body._csrf, expected)) {
        throw new HttpError(
          403,
          'forbidden',
          'This sign-in form has expired. Reload the page and try again.',
        );
      }
      const parsed = SignInFormSchema.safeParse(body);
      const asked: { environment?: Environment | undefined; returnTo?: string | undefined } = parsed.success
        ? parsed.data
        : {};
      const again = (error: string): SignInPageOptions => ({
        error,
        environment: asked.environment,
        returnTo: asked.returnTo === undefined ? undefined : returnPath(asked.returnTo),
      });
      const refuse = async (message: string) => {
        const decision = await deps.failedAuthLimiter.hit(`auth-failure:${addressKey(req)}`, clock.now());
        if (!decision.allowed) {
          res.setHeader('Retry-After', String(decision.resetSeconds));
          throw new HttpError(
            429,
            'rate_limited',
            'Too many failed sign-ins. Wait a minute, then try again.',
          );
        }
        sendPage(res, signInPage(expected, again(message)), 401);
      };
      if (!parsed.success) return refuse('Paste one of your secret keys.');
      const key = parsed.data.secretKey;
      if (key.startsWith('pk_')) {
        return refuse(
          'That is a publishable key: it is public, so it cannot sign you in. Use a secret key (sk_…).',
        );
      }
      if (!API_KEY_PATTERN.test(key))
        return refuse('That is not a ServicePay secret key (sk_test_… or sk_live_…).');
      const record = await store.apiKeys.findByHash(sha256(key));
      if (!record) return refuse('No business has that key.');
      if (record.revokedAt !== null)
        return refuse('That key was rolled and no longer works. Use the new one.');
      const business = await store.businesses.find(record.businessId);
      if (!business) return refuse('No business has that key.');
      const wanted = parsed.data.environment;
      if (wanted !== undefined && record.environment !== wanted) {
        // A real key of the business, of the other environment: not a guess, so not counted as a failure.
        return sendPage(
          res,
          signInPage(
            expected,
            again(
              `That is a ${record.environment} key. ${wanted === 'live' ? 'Live' : 'Test'} data takes your ${wanted} secret key (sk_${wanted}_…).`,
            ),
          ),
          403,
        );
      }

      const previous = await findPortalSession(store, clock, req);
      const cookieId = newCookieId();
      const now = clock.now();
      await store.writes.run(async (tx) => {
        await tx.portalSessions.prune(now);
        // Signing in again (to the other environment, or anew) ends the session this browser had.
        if (previous) await tx.portalSessions.remove(previous.idHash);
        await tx.portalSessions.insert({
          idHash: sha256(cookieId),
          businessId: business.id,
          apiKeyId: record.id,
          environment: record.environment,
          createdAt: now,
          lastSeenAt: now,
          expiresAt: now + SESSION_LIFETIME_MS,
        });
      });
      logger.info('portal sign-in', { businessId: business.id, environment: record.environment });
      clearPortalCookie(req, res, SIGN_IN_COOKIE);
      setPortalCookie(req, res, SESSION_COOKIE, cookieId, SESSION_LIFETIME_MS);
      res.redirect(303, returnPath(parsed.data.returnTo));
    },

    signOut: async (req, res) => {
      SignOutFormSchema.parse(req.body);
      const { idHash } = portalContext(res);
      await store.writes.run((tx) => tx.portalSessions.remove(idHash));
      clearPortalCookie(req, res, SESSION_COOKIE);
      res.redirect(303, '/portal/sign-in?signedOut=1');
    },
  };
}
