import type { Environment } from '@servicepay/node/protocol';
import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';

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
