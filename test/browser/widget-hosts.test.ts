import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameTexts } from '../../widget/src/texts.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { ensureWidgetBuilt } from './support/checkout-world.ts';

// The widget hosts over plain HTTP: what a browser and a CDN see (no browser needed for these).
let server: RunningServer;
const VERSION = '0.1.0';

beforeAll(async () => {
  await ensureWidgetBuilt();
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

const get = (url: string, init: RequestInit = {}) => fetch(url, init);

describe('widget hosts', () => {
  it('serve the same widget.js bytes on both hosts: /latest short-cached, /v<version> immutable, both CORS', async () => {
    const bodies: Buffer[] = [];
    for (const host of [server.widgetUrls.test, server.widgetUrls.live]) {
      const latest = await get(`${host}/latest/widget.js`);
      expect(latest.status).toBe(200);
      expect(latest.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(latest.headers.get('cache-control')).toBe('public, max-age=300');
      expect(latest.headers.get('access-control-allow-origin')).toBe('*');
      const pinned = await get(`${host}/v${VERSION}/widget.js`);
      expect(pinned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const latestBytes = Buffer.from(await latest.arrayBuffer());
      expect(Buffer.from(await pinned.arrayBuffer()).equals(latestBytes)).toBe(true);
      bodies.push(latestBytes);
    }
    expect(bodies[0]?.equals(bodies[1] ?? Buffer.alloc(0))).toBe(true);
    expect(server.widgetUrls.test).not.toBe(server.widgetUrls.live);
  });

  it('publish the SRI hash of the pinned script (widget.js.sri and manifest.json) that matches its bytes', async () => {
    const host = server.widgetUrls.test;
    const bytes = Buffer.from(await (await get(`${host}/v${VERSION}/widget.js`)).arrayBuffer());
    const expected = `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
    const sri = await get(`${host}/v${VERSION}/widget.js.sri`);
    expect(sri.headers.get('cache-control')).toContain('immutable');
    expect((await sri.text()).trim()).toBe(expected);
    const manifest = (await (await get(`${host}/v${VERSION}/manifest.json`)).json()) as {
      version: string;
      files: Record<string, { url: string; integrity: string }>;
    };
    expect(manifest.version).toBe(VERSION);
    expect(manifest.files['widget.js']).toMatchObject({ url: `/v${VERSION}/widget.js`, integrity: expected });
  });

  it('list in manifest.json the size and SRI hash of the very bytes each host serves, its own checkout page included', async () => {
    const pages: string[] = [];
    for (const host of [server.widgetUrls.test, server.widgetUrls.live]) {
      for (const channel of ['latest', `v${VERSION}`]) {
        const response = await get(`${host}/${channel}/manifest.json`);
        // It describes this host's page, which carries the host's settings: revalidated like the page.
        expect(response.headers.get('cache-control')).toBe('no-cache');
        const manifest = (await response.json()) as {
          files: Record<string, { url: string; integrity: string; bytes: number }>;
        };
        expect(Object.keys(manifest.files).sort()).toEqual([
          'frame.css',
          'frame.html',
          'frame.js',
          // The payer-facing pages' script and styles (issue 36).
          'hosted.css',
          'hosted.js',
          'widget.js',
        ]);
        for (const [name, listed] of Object.entries(manifest.files)) {
          const bytes = Buffer.from(await (await get(`${host}${listed.url}`)).arrayBuffer());
          const integrity = `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
          expect({ host, channel, name, bytes: listed.bytes, integrity: listed.integrity }).toEqual({
            host,
            channel,
            name,
            bytes: bytes.byteLength,
            integrity,
          });
          if (name === 'frame.html') pages.push(bytes.toString('utf8'));
        }
      }
    }
    // Each host's page is its own (its environment is in it), so each manifest lists its own page.
    expect(pages[0]).toContain('data-environment="test"');
    expect(pages[2]).toContain('data-environment="live"');
  });

  it('answer 304 to a matching ETag, 404 to other versions and paths, 405 to other methods', async () => {
    const host = server.widgetUrls.test;
    const first = await get(`${host}/latest/widget.js`);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    expect((await get(`${host}/latest/widget.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await get(`${host}/v9.9.9/widget.js`)).status).toBe(404);
    expect((await get(`${host}/latest/frame.html`)).status).toBe(404);
    expect((await get(`${host}/`)).status).toBe(404);
    expect((await get(`${host}/../package.json`)).status).toBe(404);
    const post = await get(`${host}/latest/widget.js`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serve the checkout page with its own strict CSP, filled in with the API and the host environment', async () => {
    for (const environment of ['test', 'live'] as const) {
      const response = await get(`${server.widgetUrls[environment]}/v${VERSION}/frame.html`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toBe(
        [
          "default-src 'none'",
          "script-src 'self'",
          "style-src 'self'",
          `connect-src ${server.baseUrl}`,
          "img-src 'self'",
          "base-uri 'none'",
          "form-action 'none'",
          'frame-ancestors http: https:',
        ].join('; '),
      );
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const page = await response.text();
      expect(page).toContain(`data-environment="${environment}"`);
      expect(page).toContain(`data-api="${server.baseUrl}"`);
      expect(page).toContain(`data-test-host="${server.widgetUrls.test}"`);
      expect(page).toContain(`data-live-host="${server.widgetUrls.live}"`);
      expect(page).not.toMatch(/<script>|<style>|style=/);
      // Every placeholder filled; the title is the texts module's (the build writes it in).
      expect(page).not.toMatch(/%[A-Z_]+%/);
      expect(page).toContain(`<title>${frameTexts.pageTitle}</title>`);
      const script = await get(`${server.widgetUrls[environment]}/v${VERSION}/frame.js`);
      expect(script.headers.get('cache-control')).toContain('immutable');
    }
  });

  it('the checkout routes allow exactly the two widget hosts by CORS', async () => {
    const preflight = (origin: string) =>
      get(`${server.baseUrl}/api/widget/bootstrap`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
    for (const origin of [server.widgetUrls.test, server.widgetUrls.live]) {
      const answer = await preflight(origin);
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
    }
    const other = await preflight('https://shop.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // A real request from another origin still gets no CORS header, so the browser hides the answer.
    const bootstrap = await get(`${server.baseUrl}/api/widget/bootstrap`, {
      method: 'POST',
      headers: { origin: 'https://shop.example', 'content-type': 'application/json' },
      body: JSON.stringify({ clientSecret: 'cs_test_nothing' }),
    });
    expect(bootstrap.headers.get('access-control-allow-origin')).toBeNull();
  });
});
