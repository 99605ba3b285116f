import type { Response } from 'express';
import type { HttpError } from '../../errors.ts';
import type { ErrorWords } from '../../middleware/classify-error.ts';
import { requestIdOf } from '../../middleware/request-context.ts';
import { html, type SafeHtml } from '../html.ts';
import { page, sendPage, signInHref } from '../layout.ts';
import { type PortalContext, signedInContext } from '../portal-auth.ts';

/** The classifier's refusals in the portal's words: for a person at a form, not a program. */
export const PAGE_WORDS: ErrorWords = {
  tooLarge: 'The form is too large.',
  wrongType: 'The form could not be read.',
  unreadable: 'The form could not be read.',
  // Nothing was kept, and the same form works once there is space.
  storageFull:
    'The service cannot store anything right now: its disk is full. Nothing was changed; try again in a minute.',
  databaseUnavailable:
    'The service cannot reach its database right now. Nothing was changed; try again in a minute.',
};

/**
 * Answers an error of the portal as its page, with the status and headers (`Retry-After`) the classifier gave
 * it: the error handler's `answer` for the portal (`createApp`).
 *
 * @example
 * app.use('/portal', portal, errorHandler({ logger, words: PAGE_WORDS, answer: sendErrorPage }));
 */
export function sendErrorPage(res: Response, error: HttpError): void {
  if (error.headers) res.set(error.headers);
  // A form or query that failed its schema: what each field needs, in the form's own words.
  const message = error.fieldErrors?.map((field) => field.message).join(' ') || error.message;
  const context = signedInContext(res);
  sendPage(
    res,
    errorPage(error.status, message, { context, code: error.code, requestId: requestIdOf(res) }),
    error.status,
  );
}

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
