import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type HostedPath, hostedPath } from './hosted-paths.ts';
import { type WidgetAsset, type WidgetRelease, widgetAsset } from './widget-assets.ts';

/** The payer-facing pages (`hosted-pages/`), handed in by the service: this layer knows only their paths. */
export type HostedPagesHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  request: { environment: 'test' | 'live'; origin: string; version: string; path: HostedPath },
) => Promise<void>;

export interface WidgetHostOptions {
  environment: 'test' | 'live';
  /** The built widget, or `undefined` to answer 503 (re-read on each miss, so a later build is picked up). */
  release: () => WidgetRelease | undefined;
  /** The API base URL the checkout calls (known once the API listens). */
  apiUrl: () => string;
  /** Both hosts' base URLs, to name the right one when a secret of the other environment arrives. */
  hostUrls: () => { test: string; live: string };
  /** The hosted checkout and payment links' pages (issue 36); without it those paths answer 404. */
  pages?: HostedPagesHandler;
}

/** `/latest/…` may change with a release: browsers and CDNs re-check after five minutes. */
const SHORT_CACHE = 'public, max-age=300';
const IMMUTABLE = 'public, max-age=31536000, immutable';

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The checkout page's own policy: its scripts and styles from this host only, calls to the API only, no
 * plugins, no forms, no base URL tricks. Any merchant page may frame it (that is its purpose).
 *
 * @example
 * res.setHeader('Content-Security-Policy', frameCsp('http://127.0.0.1:4242'));
 */
export function frameCsp(apiOrigin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${apiOrigin}`,
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    'frame-ancestors http: https:',
  ].join('; ');
}

/**
 * The checkout page as one host serves it: the build's `frame.html` with this host's settings filled in (the
 * API URL, the environment, both hosts' URLs), made once per template and settings. `manifest.json` lists this
 * asset and the page route sends its bytes, so the manifest's size and SRI hash are those of the page served.
 */
function hostFramePage(options: WidgetHostOptions): (release: WidgetRelease) => WidgetAsset | undefined {
  let made: { template: Buffer; settings: string; page: WidgetAsset } | undefined;
  return (release) => {
    const template = release.assets.get('frame.html')?.body;
    if (!template) return undefined;
    const api = options.apiUrl();
    const hosts = options.hostUrls();
    const settings = JSON.stringify([api, hosts.test, hosts.live]);
    if (made?.template !== template || made.settings !== settings) {
      const page = template
        .toString('utf8')
        .replace('%API%', escapeAttribute(api))
        .replace('%ENVIRONMENT%', options.environment)
        .replace('%TEST_HOST%', escapeAttribute(hosts.test))
        .replace('%LIVE_HOST%', escapeAttribute(hosts.live));
      made = { template, settings, page: widgetAsset('frame.html', Buffer.from(page, 'utf8')) };
    }
    return made.page;
  };
}

/**
 * One widget host (the test one on 4243, the production one on 4244): serves `widget.js` at `/latest/` (short
 * cache) and `/v<version>/` (immutable, with `widget.js.sri` publishing its SRI hash), `manifest.json` (every
 * file's URL, size and SRI hash, as this host serves it), and the checkout page `frame.html` + `frame.js` +
 * `frame.css` under `/v<version>/`, the page filled in with this host's environment and the API URL so the
 * scripts are byte-identical on both hosts.
 *
 * @example
 * const server = createServer(widgetHostHandler({ environment: 'test', release, apiUrl, hostUrls }));
 */
export function widgetHostHandler(options: WidgetHostOptions) {
  const framePage = hostFramePage(options);
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // Browsers ask every page's host for one: nothing, rather than a 404 in the payer's console.
    if (path === '/favicon.ico') {
      res.statusCode = 204;
      res.setHeader('Cache-Control', 'public, max-age=86400');
      res.end();
      return;
    }
    const hosted = hostedPath(path);
    if (hosted && options.pages) {
      const release = options.release();
      if (!release) {
        return sendText(res, req, 503, 'The widget is not built: run `npm run build -w @servicepay/widget`.');
      }
      if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') {
        res.setHeader('Allow', 'GET, HEAD, POST');
        return sendText(res, req, 405, 'Method not allowed.');
      }
      const origin = options.hostUrls()[options.environment];
      void options.pages(req, res, {
        environment: options.environment,
        origin,
        version: release.version,
        path: hosted,
      });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendText(res, req, 405, 'Method not allowed.');
    }
    const match = /^\/(latest|v([0-9A-Za-z.+-]+))\/([a-z.]+)$/.exec(path);
    if (!match) return sendText(res, req, 404, 'Not found. The widget is at /latest/widget.js.');
    const release = options.release();
    if (!release) {
      return sendText(res, req, 503, 'The widget is not built: run `npm run build -w @servicepay/widget`.');
    }
    const [, channel, version, file] = match;
    if (channel !== 'latest' && version !== release.version) {
      return sendText(res, req, 404, `This host serves version ${release.version} (and /latest/).`);
    }
    const pinned = channel !== 'latest';
    if (file === 'manifest.json') {
      const page = framePage(release);
      const manifest = {
        version: release.version,
        files: Object.fromEntries(
          [...release.assets].map(([name, built]) => {
            // The page this host serves, not the build's template of it.
            const asset = name === 'frame.html' && page ? page : built;
            return [
              name,
              {
                url: `/v${release.version}/${name}`,
                integrity: asset.integrity,
                bytes: asset.body.byteLength,
              },
            ];
          }),
        ),
      };
      // It describes this host's page, which carries the host's settings: revalidated like the page itself.
      return send(res, req, 'application/json; charset=utf-8', `${JSON.stringify(manifest, null, 2)}\n`, {
        cache: 'no-cache',
        cors: true,
      });
    }
    if (file === 'widget.js.sri') {
      const integrity = release.assets.get('widget.js')?.integrity ?? '';
      return send(res, req, 'text/plain; charset=utf-8', `${integrity}\n`, {
        cache: pinned ? IMMUTABLE : SHORT_CACHE,
        cors: true,
      });
    }
    if (file === 'widget.js') {
      const asset = release.assets.get('widget.js');
      if (!asset) return sendText(res, req, 404, 'Not found.');
      // Served with CORS so a page can pin it with `integrity` + `crossorigin="anonymous"`.
      if (req.headers['if-none-match'] === asset.etag) {
        res.setHeader('ETag', asset.etag);
        res.setHeader('Cache-Control', pinned ? IMMUTABLE : SHORT_CACHE);
        res.statusCode = 304;
        res.end();
        return;
      }
      return send(res, req, asset.contentType, asset.body, {
        cache: pinned ? IMMUTABLE : SHORT_CACHE,
        cors: true,
        etag: asset.etag,
      });
    }
    // The checkout page and its assets live under the version only: a pinned widget.js opens its own frame.
    if (!pinned) return sendText(res, req, 404, 'Not found.');
    if (file === 'frame.html') {
      const page = framePage(release);
      if (!page) return sendText(res, req, 404, 'Not found.');
      res.setHeader('Content-Security-Policy', frameCsp(new URL(options.apiUrl()).origin));
      // It carries this host's settings (the API URL), so it is re-checked rather than kept for a year.
      return send(res, req, page.contentType, page.body, { cache: 'no-cache' });
    }
    if (file === 'frame.js' || file === 'frame.css' || file === 'hosted.js' || file === 'hosted.css') {
      const asset = release.assets.get(file);
      if (!asset) return sendText(res, req, 404, 'Not found.');
      return send(res, req, asset.contentType, asset.body, { cache: IMMUTABLE, etag: asset.etag });
    }
    return sendText(res, req, 404, 'Not found.');
  };
}

function send(
  res: ServerResponse,
  req: IncomingMessage,
  contentType: string,
  body: string | Buffer,
  options: { cache: string; cors?: boolean; etag?: string },
): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', options.cache);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (options.etag) res.setHeader('ETag', options.etag);
  if (options.cors) {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  }
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendText(res: ServerResponse, req: IncomingMessage, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** The page a connection over a cap gets: self-contained, since its stylesheet would need another connection. */
const refusalPage = (message: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Too many connections</title>
</head>
<body>
<main id="main">
<h1>Too many connections</h1>
<p id="message">${message}</p>
</main>
</body>
</html>
`;

const OVER_ADDRESS_CAP_PAGE = refusalPage(
  'This network has too many connections open to the checkout. Wait a moment, then reload the page.',
);
const OVER_TOTAL_CAP_PAGE = refusalPage(
  'The checkout has too many connections open right now. Wait a moment, then reload the page.',
);

/** A 503 with `page`, written on the bare socket and ended (the caps close the socket once it is out). */
function refuseWith(socket: Socket, page: string): void {
  socket.end(
    'HTTP/1.1 503 Service Unavailable\r\n' +
      'Content-Type: text/html; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(page)}\r\n` +
      "Content-Security-Policy: default-src 'none'\r\n" +
      'X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\n' +
      `Retry-After: 1\r\nConnection: close\r\n\r\n${page}`,
  );
}

/**
 * The widget hosts' answer to a connection one address opens beyond its cap (`capConnectionsPerAddress`): 503
 * with `Retry-After: 1`, written on the bare socket the moment it is accepted, so before its request is read. A
 * short HTML page, since the request it answers is most often a payer's page (the checkout, a payment link);
 * for a script or a style the browser sees the 503 and ignores the page. No stylesheet or script of its own
 * (either would open another connection), no framing ban (the checkout frame is meant to be framed), never
 * cached.
 *
 * @example
 * capConnectionsPerAddress(server, { maxConnectionsPerAddress: 256, refuse: refuseOverAddressCap });
 */
export function refuseOverAddressCap(socket: Socket): void {
  refuseWith(socket, OVER_ADDRESS_CAP_PAGE);
}

/**
 * The widget hosts' answer to a connection beyond a host's total cap (`capConnections`): the same 503 page as
 * `refuseOverAddressCap`, saying that the checkout, not the payer's network, has too many connections.
 *
 * @example
 * capConnections(server, { maxConnections: 2048, refuse: refuseOverTotalCap });
 */
export function refuseOverTotalCap(socket: Socket): void {
  refuseWith(socket, OVER_TOTAL_CAP_PAGE);
}
