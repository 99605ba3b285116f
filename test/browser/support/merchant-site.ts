import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Exactly the Content-Security-Policy of spec §4, for the given widget host and API. */
export function merchantCsp(widgetHost: string, apiUrl: string): string {
  return [
    `script-src 'self' ${widgetHost}`,
    `connect-src 'self' ${apiUrl}`,
    `frame-src 'self' ${widgetHost}`,
  ].join('; ');
}

/**
 * The merchant page's own script, served from the merchant's origin (the CSP allows no inline script). It
 * opens the checkout when asked, records every callback with its payload in `window.merchantLog` (and when
 * onSuccess ran, as epoch milliseconds, in `window.successAt`), and every CSP violation in `window.cspViolations`.
 */
const MERCHANT_SCRIPT = `
window.merchantLog = [];
window.cspViolations = [];
document.addEventListener('securitypolicyviolation', function (event) {
  window.cspViolations.push(event.violatedDirective + ' ' + event.blockedURI);
});
window.openCheckout = function (clientSecret, extra) {
  var options = {
    clientSecret: clientSecret,
    onSuccess: function (result) {
      window.successAt = performance.timeOrigin + performance.now();
      window.merchantLog.push({ callback: 'onSuccess', payload: result });
    },
    onError: function (error) { window.merchantLog.push({ callback: 'onError', payload: error }); },
    onCancel: function () { window.merchantLog.push({ callback: 'onCancel', payloadLength: arguments.length }); }
  };
  if (extra) for (var key in extra) options[key] = extra[key];
  window.ServicePay.init(options);
};
document.addEventListener('click', function (event) {
  var target = event.target;
  if (target && target.id === 'pay') window.openCheckout(target.getAttribute('data-secret'));
});
`;

export interface MerchantSite {
  url: string;
  /** Serves `html` at `path` under the spec's CSP for `widgetHost`; returns the page's URL. */
  page(path: string, html: string, widgetHost: string): string;
  /** Serves a static file (a script, say) at `path`. */
  file(path: string, contentType: string, body: string): void;
  close(): Promise<void>;
}

/** A tiny merchant web server on loopback (port 0) that sends the spec's CSP on its pages. */
export async function startMerchantSite(apiUrl: string): Promise<MerchantSite> {
  const routes = new Map<string, { type: string; body: string; csp?: string }>();
  routes.set('/merchant.js', { type: 'text/javascript; charset=utf-8', body: MERCHANT_SCRIPT });
  routes.set('/favicon.ico', { type: 'image/x-icon', body: '' });
  const server: Server = createServer((req, res) => {
    const route = routes.get((req.url ?? '/').split('?')[0] ?? '/');
    if (!route) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    res.setHeader('Content-Type', route.type);
    res.setHeader('Cache-Control', 'no-store');
    if (route.csp) res.setHeader('Content-Security-Policy', route.csp);
    res.end(route.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    page(path, html, widgetHost) {
      routes.set(path, {
        type: 'text/html; charset=utf-8',
        body: html,
        csp: merchantCsp(widgetHost, apiUrl),
      });
      return `${url}${path}`;
    },
    file(path, contentType, body) {
      routes.set(path, { type: contentType, body });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A plain shop page: one script tag for widget.js (from `scriptUrl`), the merchant's own script, a button. */
export function shopPage(scriptUrl: string, options: { integrity?: string } = {}): string {
  const pinned = options.integrity ? ` integrity="${options.integrity}" crossorigin="anonymous"` : '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title>
<script src="${scriptUrl}"${pinned}></script>
<script src="/merchant.js"></script>
</head>
<body>
<main><h1>Checkout</h1><p>Your basket: one very nice thing.</p><button id="pay" type="button">Pay</button>
${'<p>Long page to scroll.</p>'.repeat(60)}</main>
</body>
</html>`;
}

/**
 * The merchant's pages a hosted checkout sends the payer back to (`successUrl`, `cancelUrl`): every path answers
 * one page whose heading says the payer landed, so a test sees where the redirect went by the URL alone.
 *
 * @example
 * const shop = await startLandingPages();
 * await page.waitForURL(`${shop.url}/paid?session=${id}`);
 * await shop.close();
 */
export async function startLandingPages(): Promise<{ url: string; close: () => void }> {
  const server: Server = createServer((_request, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('<!doctype html><html lang="en"><title>Shop</title><main><h1>Landed</h1></main></html>');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
