import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';

/**
 * The sign-in page: paste one of the business's secret keys. The key proves who you are and is then
 * forgotten: the portal keeps only a session of its own.
 *
 * @example
 * res.send(signInPage(token).value);
 */
export function signInPage(token: string, error?: string, status?: string): SafeHtml {
  return page({
    title: 'Sign in',
    ...(error ? { notice: { tone: 'bad' as const, text: error } } : {}),
    ...(status ? { notice: { tone: 'info' as const, text: status } } : {}),
    body: html`<section class="card narrow" aria-labelledby="sign-in-title">
  <h1 id="sign-in-title">Sign in to the developer portal</h1>
  <p>Paste one of your business's secret keys (<code>sk_test_…</code> or <code>sk_live_…</code>). It is checked
  against its stored hash and never kept: the portal opens a session of its own, which ends after 8 hours, or
  after an hour without use.</p>
  <form method="post" action="/portal/sign-in" class="form">
    <input type="hidden" name="_csrf" value="${token}">
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
