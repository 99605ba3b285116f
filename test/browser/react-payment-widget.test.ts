import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentWidget } from '../../widget/react/src/index.ts';
import { reactTexts } from '../../widget/src/texts.ts';
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

type Shop = { reactShop: { open(secret: string, version?: string): void; unmount(): void } };

/** Mounts the PaymentWidget with `secret`, or gives the mounted one this new secret (a re-render). */
const open = (page: Page, secret: string, version?: string) =>
  page.evaluate((mount) => (window as unknown as Shop).reactShop.open(mount.secret, mount.version), {
    secret,
    version,
  });

/**
 * Unmounts the PaymentWidget and reports what is left on the page one task later: the component's close is
 * deferred one task (StrictMode's remount may take the checkout over), nothing longer.
 */
const unmountAndLook = (page: Page) =>
  page.evaluate(async () => {
    (window as unknown as Shop).reactShop.unmount();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return {
      checkouts: document.querySelectorAll('servicepay-checkout').length,
      iframes: document.querySelectorAll('iframe').length,
      bodyStyle: document.body.getAttribute('style'),
    };
  });

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
    await open(page, session.clientSecret);
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
    await open(page, session.clientSecret);
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

  it('a new clientSecret while a checkout is open opens the new checkout; the first closes without a callback', async () => {
    const { page, context, problems } = await openPage(browser);
    const bootstraps: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/widget/bootstrap') && request.method() === 'POST')
        bootstraps.push(request.url());
    });
    await page.goto(reactShopUrl('/react-new-secret.html'));
    const first = await world.createSession(500_000);
    const second = await world.createSession(120_000);
    await open(page, first.clientSecret);
    const firstAccount = await shownAccountNumber(page);
    await expect(heading(page).textContent()).resolves.toContain('₦5,000.00');

    await open(page, second.clientSecret);
    // The second session's own checkout: its bootstrap ran and its amount and account are on screen.
    await heading(page).filter({ hasText: '₦1,200.00' }).waitFor();
    const secondAccount = await shownAccountNumber(page);
    expect(secondAccount).toMatch(/^\d{10}$/);
    expect(secondAccount).not.toBe(firstAccount);
    expect(bootstraps).toHaveLength(2);
    expect(await page.locator('servicepay-checkout').count()).toBe(1);
    // As documented: replacing the secret closes the first checkout like an unmount, without cancelling it
    // and without onCancel or onError; a transfer to its account still pays it (the webhook tells the shop).
    expect(await merchantLog(page)).toEqual([]);
    expect(await world.sessionStatus(first.id)).toBe('awaiting_payment');

    await world.transfer(secondAccount, 120_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(second));
    expect((await world.transfer(firstAccount, 500_000)).body.data.outcome).toBe('credited');
    expect(await merchantLog(page)).toEqual(paidOnce(second));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('unmounting right after success closes the overlay at once; a remount with the spent secret reports it', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(reactShopUrl('/react-unmount-after-success.html'));
    const session = await world.createSession(90_000);
    await open(page, session.clientSecret);
    await world.transfer(await shownAccountNumber(page), 90_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    // SUCCESS would go back by itself after 3 s; the unmount does not wait for that.
    expect(await unmountAndLook(page)).toEqual({ checkouts: 0, iframes: 0, bodyStyle: null });
    expect(await merchantLog(page)).toEqual(paidOnce(session));

    // Mounted again with the same secret, the checkout opens again (as documented): the service refuses the
    // spent secret, so the payer sees ERROR and the shop gets onError once.
    await open(page, session.clientSecret);
    await heading(page).filter({ hasText: 'Something went wrong' }).waitFor();
    const log = await merchantLog(page);
    expect(log).toEqual([
      ...paidOnce(session),
      { callback: 'onError', payload: { message: expect.any(String) } },
    ]);
    expect(await unmountAndLook(page)).toEqual({ checkouts: 0, iframes: 0, bodyStyle: null });
    expect(problems.filter((line) => !/Failed to load resource.*409/.test(line))).toEqual([]);
    await context.close();
  });

  it('a widget.js that cannot be loaded is reported through onError with the script named', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(reactShopUrl('/react-no-script.html'));
    const session = await world.createSession(90_000);
    // The host serves one version; a pin to another answers 404.
    await open(page, session.clientSecret, '9.9.9');
    await expect.poll(() => merchantLog(page)).toHaveLength(1);
    const src = `${world.server.widgetUrls.test}/v9.9.9/widget.js`;
    expect(await merchantLog(page)).toEqual([
      { callback: 'onError', payload: { message: reactTexts.scriptFailed(src) } },
    ]);
    expect(await page.locator('servicepay-checkout').count()).toBe(0);
    expect(problems.filter((line) => !/Failed to load resource.*404/.test(line))).toEqual([]);
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
