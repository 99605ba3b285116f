import { html, type SafeHtml } from '../html.ts';
import { page, signInHref } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

const TITLES: Record<number, string> = {
  400: 'That did not work',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not possible now',
  413: 'Too much data',
  415: 'Unsupported form',
  429: 'Too many attempts',
  500: 'Something went wrong',
};

/**
 * A portal error as a page: the status, what happened (and its code, for support and for tests), and a way
 * back. A refusal for the session's environment also offers the sign-in to the other one.
 *
 * @example
 * res.status(403).send(errorPage(403, 'This session belongs to another business.', { context, code: 'forbidden' }).value);
 */
export function errorPage(
  status: number,
  message: string,
  options: {
    context?: PortalContext | undefined;
    requestId?: string | undefined;
    code?: string | undefined;
  } = {},
): SafeHtml {
  const { context, requestId, code } = options;
  const title = TITLES[status] ?? 'That did not work';
  const other = context?.environment === 'test' ? 'live' : 'test';
  return page({
    title,
    ...(context ? { context } : {}),
    body: html`<section class="card narrow" aria-labelledby="error-title">
  <h1 id="error-title">${title}</h1>
  <p class="error-message">${message}</p>
  <p class="muted">HTTP ${status}${code ? html` · <code class="error-code">${code}</code>` : ''}${requestId ? html` · request <code>${requestId}</code>` : ''}</p>
  <p>${
    context && code === 'environment_mismatch'
      ? html`<a class="button button-primary" href="${signInHref(other)}">Sign in to ${other} data</a> `
      : ''
  }<a class="button" href="${context ? '/portal/sessions' : '/portal/sign-in'}">Back to the portal</a></p>
</section>`,
  });
}
