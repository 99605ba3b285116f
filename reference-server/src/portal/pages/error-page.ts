import { html, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
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
  503: 'Not available right now',
};

/**
 * A portal error as a page: the status, what happened, and a way back.
 *
 * @example
 * res.status(403).send(errorPage(403, 'This session belongs to another business.', context).value);
 */
export function errorPage(
  status: number,
  message: string,
  context?: PortalContext,
  requestId?: string,
): SafeHtml {
  const title = TITLES[status] ?? 'That did not work';
  return page({
    title,
    ...(context ? { context } : {}),
    body: html`<section class="card narrow" aria-labelledby="error-title">
  <h1 id="error-title">${title}</h1>
  <p class="error-message">${message}</p>
  <p class="muted">HTTP ${status}${requestId ? html` · request <code>${requestId}</code>` : ''}</p>
  <p><a class="button" href="${context ? '/portal/sessions' : '/portal/sign-in'}">Back to the portal</a></p>
</section>`,
  });
}
