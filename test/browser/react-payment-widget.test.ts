import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentWidget } from '../../widget/react/src/index.ts';
import { launchChromium, openPage } from './support/browser.ts';
import {
  type CheckoutWorld,
  heading,
  merchantLog,
  paidOnce,
  shownAccountNumber,
  startCheckoutWorld,
} from './support/checkout-world.ts';
import { leftovers } from './support/inspect.ts';

let browser: Browser;
let world: CheckoutWorld;

beforeAll(async () => {
  const bundle = build({
    entryPoints: [fileURLToPath(new URL('./support/react-shop.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    write: false,
    define: { 'process.env.NODE_ENV': '"development"' },
    logLevel: 'silent',
  });
  let script: string;
  [browser, world, script] = await Promise.all([
    launchChromium(),
    startCheckoutWorld(),
    bundle.then((result) => result.outputFiles[0]?.text ?? ''),
  ]);
  world.site.file('/react-shop.js', 'text/javascript; charset=utf-8', script);
});

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

function reactShopUrl(path: string, options: { ownTag?: boolean } = {}): string {
  const host = world.server.widgetUrls.test;
  const ownTag = options.ownTag ? `<script src="${host}/latest/widget.js"></script>` : '';
  return world.site.page(
    path,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>React shop</title>
<meta name="widget-host" content="${host}">${ownTag}<script src="/react-shop.js" defer></script></head>
<body><div id="root"></div></body></html>`,
    host,
  );
}

const widgetScripts = (page: Page) =>
  page.evaluate(
    () =>
      [...document.querySelectorAll('script[src]')].filter((s) =>
        s.getAttribute('src')?.endsWith('/widget.js'),
      ).length,
  );

describe('@servicepay/react PaymentWidget', () => {
  it('under StrictMode opens once per client secret, pays, and leaves nothing after unmount', async () => {
    const { page, context, problems } = await openPage(browser);
    const bootstraps: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/widget/bootstrap') && request.method() === 'POST')
        bootstraps.push(request.url());
    });
    await page.goto(reactShopUrl('/react.html'));
    // Nothing loaded before the widget is rendered.
    expect(await widgetScripts(page)).toBe(0);
    const session = await world.createSession(500_000);
    await page.evaluate(
      (secret) => (window as unknown as { reactShop: { open(s: string): void } }).reactShop.open(secret),
      session.clientSecret,
    );
    const accountNumber = await shownAccountNumber(page);
    expect(await widgetScripts(page)).toBe(1);
    expect(await page.locator('servicepay-checkout').count()).toBe(1);
    expect(bootstraps).toHaveLength(1);
    await world.transfer(accountNumber, 500_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    await page.evaluate(() => (window as unknown as { reactShop: { unmount(): void } }).reactShop.unmount());
    await page.waitForSelector('servicepay-checkout', { state: 'detached' });
    expect(await leftovers(page)).toMatchObject({
      checkouts: 0,
      iframes: 0,
      bodyStyle: null,
      rootStyle: null,
    });
    expect(await merchantLog(page)).toHaveLength(1);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('unmounting while open closes the overlay without cancelling; a tag already on the page is reused', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(reactShopUrl('/react-own-tag.html', { ownTag: true }));
    const session = await world.createSession(80_000);
    await page.evaluate(
      (secret) => (window as unknown as { reactShop: { open(s: string): void } }).reactShop.open(secret),
      session.clientSecret,
    );
    await shownAccountNumber(page);
    expect(await widgetScripts(page)).toBe(1);
    await page.evaluate(() => (window as unknown as { reactShop: { unmount(): void } }).reactShop.unmount());
    await page.waitForSelector('servicepay-checkout', { state: 'detached' });
    expect(await leftovers(page)).toMatchObject({
      checkouts: 0,
      iframes: 0,
      bodyStyle: null,
      rootStyle: null,
    });
    expect(await merchantLog(page)).toEqual([]);
    expect(await world.sessionStatus(session.id)).toBe('awaiting_payment');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('renders nothing on a server and touches no window there', () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined');
    const html = renderToString(
      createElement(PaymentWidget, {
        mode: 'LIVE',
        clientSecret: 'cs_live_abcdefghijklmnopqrstuvwxyz012345',
        onSuccess: () => undefined,
        onError: () => undefined,
      }),
    );
    expect(html).toBe('');
  });
});
