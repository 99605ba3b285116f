import type { IncomingMessage, ServerResponse } from 'node:http';

/** Text as HTML: every character that could open markup or end an attribute is escaped. */
export const escapeHtml = (text: string): string =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/**
 * The policy of every payer-facing page (issue 36): scripts, styles and frames from this widget host only, no
 * inline script or style, no plugins, forms posted to this host only, never framed (no clickjacking of a
 * payment form). The checkout page frames this host's own `frame.html`, which keeps its own policy.
 *
 * @example
 * res.setHeader('Content-Security-Policy', hostedPageCsp());
 */
export function hostedPageCsp(): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "frame-src 'self'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** What a page shows: its title, its main content (HTML already escaped), and whether it loads the checkout. */
export interface HostedPage {
  status: number;
  title: string;
  body: string;
  /** The test-mode banner: a test link or session never moves money. */
  testMode: boolean;
  /** `/v<version>/hosted.js`, the one script (the hosted checkout only). */
  script?: string;
  headers?: Record<string, string>;
}

/**
 * A payer-facing page of the widget host: plain HTML, one stylesheet and at most one script of this host, the
 * strict policy, no referrer, never stored by a cache (it may name a payer's session).
 *
 * @example
 * sendPage(req, res, '0.1.0', { status: 410, title: 'Link closed', body: '<p>…</p>', testMode: false });
 */
export function sendPage(req: IncomingMessage, res: ServerResponse, version: string, page: HostedPage): void {
  const script = page.script ? `\n<script src="${escapeHtml(page.script)}" defer></script>` : '';
  const banner = page.testMode
    ? '<header><p class="test-mode"><strong>Test mode</strong>: no real money moves.</p></header>\n'
    : '';
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)}</title>
<link rel="stylesheet" href="/v${escapeHtml(version)}/hosted.css">${script}
</head>
<body>
${banner}<main id="main">
${page.body}
</main>
</body>
</html>
`;
  res.statusCode = page.status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', hostedPageCsp());
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
  for (const [name, value] of Object.entries(page.headers ?? {})) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(html));
  res.end(req.method === 'HEAD' ? undefined : html);
}

/** Sends the payer elsewhere after a form or a checkout (303: the next request is a GET). */
export function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 303;
  res.setHeader('Location', location);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', 0);
  res.end();
}

/** A page that says one thing: a heading and a paragraph (a link back when there is one). */
export function messagePage(
  status: number,
  title: string,
  text: string,
  testMode: boolean,
  back?: { href: string; label: string },
): HostedPage {
  const link = back ? `\n<p><a href="${escapeHtml(back.href)}">${escapeHtml(back.label)}</a></p>` : '';
  return {
    status,
    title,
    testMode,
    body: `<h1>${escapeHtml(title)}</h1>\n<p id="message">${escapeHtml(text)}</p>${link}`,
  };
}
