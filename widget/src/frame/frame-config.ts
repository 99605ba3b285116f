/** What the widget host tells the checkout page about itself (data attributes on `<html>`). */
export interface FrameConfig {
  /** The API base URL, e.g. `http://127.0.0.1:4242`. */
  apiUrl: string;
  /** The environment of the host that served this page. */
  environment: 'test' | 'live';
  /** Base URLs of both widget hosts, to name the right one in an environment mismatch. */
  testHost: string;
  liveHost: string;
}

/**
 * Reads the host's settings from the page it served, so `widget.js` and `frame.js` are the same bytes on the
 * test and the production host. `undefined` when the page was not served by a widget host.
 *
 * @example
 * const config = readFrameConfig(document);
 */
export function readFrameConfig(doc: Document): FrameConfig | undefined {
  const data = doc.documentElement.dataset;
  const { api, environment, testHost, liveHost } = data;
  if (!api || (environment !== 'test' && environment !== 'live') || !testHost || !liveHost) return undefined;
  return { apiUrl: api, environment, testHost, liveHost };
}
