import type { Environment } from '@servicepay/node/protocol';
import type { Response } from 'express';
import { html, type SafeHtml } from './html.ts';
import type { PortalContext } from './portal-auth.ts';

/**
 * The portal's sections, in navigation order.
 *
 * @example
 * SECTIONS.map((section) => section.path); // ['/portal/sessions', …]
 */
export const SECTIONS = [
  { id: 'sessions', label: 'Sessions', path: '/portal/sessions' },
  { id: 'events', label: 'Events', path: '/portal/events' },
  { id: 'requests', label: 'Requests', path: '/portal/requests' },
  { id: 'bank', label: 'Test bank', path: '/portal/bank' },
  { id: 'payment-links', label: 'Payment links', path: '/portal/payment-links' },
  { id: 'webhooks', label: 'Webhooks', path: '/portal/webhooks' },
  { id: 'keys', label: 'API keys', path: '/portal/keys' },
  { id: 'kyc', label: 'KYC', path: '/portal/kyc' },
] as const;
export type SectionId = (typeof SECTIONS)[number]['id'];

export interface PageOptions {
  title: string;
  /** Signed-in pages get the header with the business, the environment switch and sign-out. */
  context?: PortalContext;
  section?: SectionId;
  /** Where a sign-in to the other environment comes back to. */
  path?: string;
  /** A message shown above the content and announced to screen readers. */
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; text: SafeHtml | string };
  body: SafeHtml;
}

/**
 * The hidden synchronizer token every state-changing form carries.
 *
 * @example
 * html`<form method="post" action="/portal/sign-out">${csrfField(context)}…</form>`;
 */
export const csrfField = (context: PortalContext): SafeHtml =>
  html`<input type="hidden" name="_csrf" value="${context.csrfToken}">`;

/**
 * Where a sign-in to an environment starts: the sign-in page asking for that environment's secret key, coming
 * back to `returnTo` (a portal section) afterwards.
 *
 * @example
 * html`<a href="${signInHref('live', '/portal/keys')}">Sign in to live data</a>`;
 */
export const signInHref = (environment: Environment, returnTo?: string): string =>
  `/portal/sign-in?${new URLSearchParams({ environment, ...(returnTo ? { returnTo } : {}) }).toString()}`;

/**
 * "Test data / Live data": the session's environment, and a link to sign in to the other one. A portal session
 * reaches only the environment of the key that opened it, so the switch is a sign-in with the other
 * environment's secret key, never a setting of the session.
 */
function environmentSwitch(context: PortalContext, path: string): SafeHtml {
  const option = (environment: Environment, label: string) =>
    context.environment === environment
      ? html`<span class="toggle-option" aria-current="true">${label}</span>`
      : html`<a class="toggle-option" href="${signInHref(environment, path)}">${label}</a>`;
  return html`<div class="env-toggle">
    <span class="env-toggle-label" id="env-toggle-label">Signed in to</span>
    <span class="toggle" role="group" aria-labelledby="env-toggle-label">${option('test', 'Test data')}${option('live', 'Live data')}</span>
  </div>`;
}

function header(context: PortalContext | undefined, section: SectionId | undefined, path: string): SafeHtml {
  const brand = html`<a class="brand" href="/portal"><span class="brand-mark" aria-hidden="true">SP</span><span>ServicePay <span class="brand-sub">Developers</span></span></a>`;
  if (!context)
    return html`<header class="topbar" role="banner"><div class="topbar-inner">${brand}</div></header>`;
  const links = SECTIONS.map((item) =>
    item.id === section
      ? html`<li><a href="${item.path}" aria-current="page">${item.label}</a></li>`
      : html`<li><a href="${item.path}">${item.label}</a></li>`,
  );
  return html`<header class="topbar" role="banner">
    <div class="topbar-inner">
      ${brand}
      <div class="account">
        <span class="business" title="${context.business.name}">${context.business.name}</span>
        ${environmentSwitch(context, path)}
        <form method="post" action="/portal/sign-out">${csrfField(context)}<button type="submit" class="button button-quiet">Sign out</button></form>
      </div>
    </div>
    <nav class="nav" aria-label="Portal"><ul>${links}</ul></nav>
  ${
    context.environment === 'test'
      ? html`<p class="mode-strip mode-test">Test data: simulated payments only, no real money moves.</p>`
      : html`<p class="mode-strip mode-live">Live data: real payments.${context.business.kycApproved ? '' : ' Live keys answer 403 until your KYC is approved.'}</p>`
  }
  </header>`;
}

/**
 * A whole portal page: landmarks (banner, navigation, main, contentinfo), a skip link, one `h1`, the
 * stylesheet and script as files (the CSP allows no inline code).
 *
 * @example
 * res.send(page({ title: 'Sessions', context, section: 'sessions', path: '/portal/sessions', body }).value);
 */
export function page(options: PageOptions): SafeHtml {
  const path = options.path ?? '/portal';
  const notice = options.notice
    ? html`<div class="notice notice-${options.notice.tone}" role="${options.notice.tone === 'bad' ? 'alert' : 'status'}">${options.notice.text}</div>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${options.title} · ServicePay Developers</title>
<link rel="stylesheet" href="/portal/assets/portal.css">
<script src="/portal/assets/portal.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${header(options.context, options.section, path)}
<main id="main" class="main" tabindex="-1">
${notice}
${options.body}
</main>
<footer class="footer" role="contentinfo"><p>ServicePay reference server · <a href="/openapi.json">OpenAPI document</a></p></footer>
</body>
</html>`;
}

/**
 * Answers a portal page as HTML, with its status.
 *
 * @example
 * sendPage(res, kycPage(context));
 */
export const sendPage = (res: Response, markup: SafeHtml, status = 200): void => {
  res.status(status).type('html').send(markup.value);
};
