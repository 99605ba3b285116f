import { API_KEY_PATTERN, type Environment } from '@servicepay/node/protocol';
import type { Request, Response } from 'express';
import { HttpError } from '../../errors.ts';
import { sha256 } from '../../internal/random.ts';
import { addressKey } from '../../middleware/rate-limit.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import type { PortalServices } from '../../routes/portal-deps.ts';
import { SignInFormSchema, SignInQuerySchema, SignOutFormSchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { page, SECTIONS, sendPage } from '../layout.ts';
import {
  clearPortalCookie,
  findPortalSession,
  newCookieId,
  readCookies,
  SESSION_COOKIE,
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  SIGN_IN_COOKIE,
  setPortalCookie,
} from '../portal-auth.ts';

const RETURN_PATHS = new Set<string>(SECTIONS.map((section) => section.path));

/** A portal section to come back to, never another site; the Sessions page otherwise. */
const returnPath = (asked: string | undefined): string =>
  asked !== undefined && RETURN_PATHS.has(asked) ? asked : '/portal/sessions';

/**
 * A refused sign-in: counted against the address (429 once too many), else the form again with why (401).
 * `asked`: the environment and page the form asked for, when it could be read.
 */
async function refuseSignIn(
  { req, res }: { req: Request; res: Response },
  { clock, failedAuthLimiter }: Pick<PortalServices, 'clock' | 'failedAuthLimiter'>,
  message: string,
  asked: { environment?: Environment | undefined; returnTo?: string | undefined } = {},
): Promise<void> {
  const decision = await failedAuthLimiter.hit(`auth-failure:${addressKey(req)}`, clock.now());
  if (!decision.allowed) {
    res.setHeader('Retry-After', String(decision.resetSeconds));
    throw new HttpError(429, 'rate_limited', 'Too many failed sign-ins. Wait a minute, then try again.');
  }
  sendPage(res, signInPage(signInToken(req), again(message, asked)), 401);
}

/** The sign-in cookie's token (the `portalSignIn` guard checked the form echoes it). */
const signInToken = (req: Request): string => readCookies(req).get(SIGN_IN_COOKIE) ?? '';

/** The sign-in form again, with a refusal, for the environment and page it asked for. */
const again = (
  error: string,
  asked: { environment?: Environment | undefined; returnTo?: string | undefined },
): SignInPageOptions => ({
  error,
  environment: asked.environment,
  returnTo: asked.returnTo === undefined ? undefined : returnPath(asked.returnTo),
});

/**
 * The portal's entry, sign-in and sign-out. A sign-in opens a session in the environment of the key pasted; the
 * header's "Test data / Live data" switch leads to the sign-in page asking for the other environment's secret
 * key, and signing in with it replaces the browser's session (a session never changes environment).
 */
export const SIGN_IN_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal',
    operationId: 'portalHome',
    tag: 'Portal',
    summary: 'Portal entry: to the sessions page, or to sign-in',
    auth: 'portalPublic',
    success: { 303: seeOther('To /portal/sessions or /portal/sign-in.') },
    errors: [],
    handler: async ({ req, res }, { store, clock }) => {
      res.redirect(
        303,
        (await findPortalSession(store, clock, req)) ? '/portal/sessions' : '/portal/sign-in',
      );
    },
  }),
  defineOperation({
    method: 'get',
    path: '/portal/sign-in',
    operationId: 'portalSignInPage',
    tag: 'Portal',
    summary: 'Sign-in page (sets the sign-in form cookie)',
    description:
      "`environment` asks for a secret key of that environment: the header's Test data / Live data switch leads here, since a portal session reaches only the environment of the key that opened it.",
    auth: 'portalPublic',
    query: SignInQuerySchema,
    success: {
      200: htmlPage('The sign-in form.'),
      303: seeOther('Already signed in (to the environment asked for, if any).'),
    },
    errors: [],
    handler: async ({ query: asked, req, res }, { store, clock }) => {
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
  }),
  defineOperation({
    method: 'post',
    path: '/portal/sign-in',
    operationId: 'portalSignIn',
    tag: 'Portal',
    summary: "Sign in with a secret key (opens a portal session in that key's environment)",
    auth: 'portalSignIn',
    // A form that is not one (no key pasted) is a failed sign-in like a wrong key: counted, and answered 401
    // (429 once the address failed too often), never 400.
    form: {
      schema: SignInFormSchema,
      invalid: (_error, context, deps) => refuseSignIn(context, deps, 'Paste one of your secret keys.'),
      invalidStatuses: [401, 429],
    },
    success: { 303: seeOther('Signed in: to the section in `returnTo`, else /portal/sessions.') },
    errors: [401, 429],
    handler: async ({ body: form, req, res }, deps) => {
      const { store, clock, logger, portalSessions } = deps;
      const refuse = (message: string) => refuseSignIn({ req, res }, deps, message, form);
      const key = form.secretKey;
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
      const wanted = form.environment;
      if (wanted !== undefined && record.environment !== wanted) {
        // A real key of the business, of the other environment: not a guess, so not counted as a failure.
        return sendPage(
          res,
          signInPage(
            signInToken(req),
            again(
              `That is a ${record.environment} key. ${wanted === 'live' ? 'Live' : 'Test'} data takes your ${wanted} secret key (sk_${wanted}_…).`,
              form,
            ),
          ),
          403,
        );
      }

      const previous = await findPortalSession(store, clock, req);
      const cookieId = newCookieId();
      // Signing in again (to the other environment, or anew) ends the session this browser had.
      await portalSessions.open(
        {
          idHash: sha256(cookieId),
          businessId: business.id,
          apiKeyId: record.id,
          environment: record.environment,
        },
        previous?.idHash,
      );
      logger.info('portal sign-in', { businessId: business.id, environment: record.environment });
      clearPortalCookie(req, res, SIGN_IN_COOKIE);
      setPortalCookie(req, res, SESSION_COOKIE, cookieId, SESSION_LIFETIME_MS);
      res.redirect(303, returnPath(form.returnTo));
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/sign-out',
    operationId: 'portalSignOut',
    tag: 'Portal',
    summary: 'Sign out',
    auth: 'portalSession',
    form: { schema: SignOutFormSchema },
    success: { 303: seeOther('To the sign-in page.') },
    errors: [],
    handler: async ({ caller, req, res }, { portalSessions }) => {
      await portalSessions.end(caller.idHash);
      clearPortalCookie(req, res, SESSION_COOKIE);
      res.redirect(303, '/portal/sign-in?signedOut=1');
    },
  }),
] as const;

export interface SignInPageOptions {
  /** A refusal of the last attempt. */
  error?: string | undefined;
  /** A note, such as "You are signed out." */
  status?: string | undefined;
  /** The environment asked for: only a secret key of it signs in. */
  environment?: Environment | undefined;
  /** The environment this browser is signed in to now (the sign-in replaces that session). */
  signedInTo?: Environment | undefined;
  /** The portal page to come back to. */
  returnTo?: string | undefined;
}

/**
 * The sign-in page: paste one of the business's secret keys. The key proves who you are and is then
 * forgotten: the portal keeps only a session of its own, in that key's environment. Asked for an environment
 * (the header's switch), it takes a secret key of that environment only.
 *
 * @example
 * res.send(signInPage(token, { environment: 'live', signedInTo: 'test' }).value);
 */
export function signInPage(token: string, options: SignInPageOptions = {}): SafeHtml {
  const { environment, signedInTo } = options;
  const notice = options.error
    ? { tone: 'bad' as const, text: options.error }
    : options.status
      ? { tone: 'info' as const, text: options.status }
      : undefined;
  const title = environment ? `Sign in to ${environment} data` : 'Sign in to the developer portal';
  const keys = environment
    ? html`your business's <strong>${environment}</strong> secret key (<code>sk_${environment}_…</code>)`
    : html`one of your business's secret keys (<code>sk_test_…</code> or <code>sk_live_…</code>)`;
  return page({
    title: 'Sign in',
    ...(notice ? { notice } : {}),
    body: html`<section class="card narrow" aria-labelledby="sign-in-title">
  <h1 id="sign-in-title">${title}</h1>
  ${
    signedInTo && environment && signedInTo !== environment
      ? html`<p>You are signed in to ${signedInTo} data. A portal session reaches only the environment of the key
  it was opened with, so ${environment} data takes a sign-in with your ${environment} secret key; it ends the
  ${signedInTo} session. <a href="${options.returnTo ?? '/portal/sessions'}">Stay in ${signedInTo} data</a>.</p>`
      : ''
  }
  <p>Paste ${keys}. It is checked against its stored hash and never kept: the portal opens a session of its own,
  which shows and changes that key's environment only, and ends after 8 hours, or after an hour without use.</p>
  <form method="post" action="/portal/sign-in" class="form">
    <input type="hidden" name="_csrf" value="${token}">
    ${environment ? html`<input type="hidden" name="environment" value="${environment}">` : ''}
    ${options.returnTo ? html`<input type="hidden" name="returnTo" value="${options.returnTo}">` : ''}
    <div class="field">
      <label for="secretKey">Secret key</label>
      <input id="secretKey" name="secretKey" type="password" autocomplete="off" spellcheck="false" required
        aria-describedby="secretKey-help" inputmode="text">
      <p class="help" id="secretKey-help"><code>npm start</code> prints the development business's test key; <code>servicepay-server business create</code> prints a new business's keys.</p>
    </div>
    <button type="submit" class="button button-primary">Sign in</button>
  </form>
</section>`,
  });
}
