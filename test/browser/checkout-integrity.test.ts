import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from './support/browser.ts';
import {
  type CheckoutWorld,
  checkoutFrame,
  heading,
  merchantLog,
  openCheckout,
  paidOnce,
  shownAccountNumber,
  startCheckoutWorld,
} from './support/checkout-world.ts';
import { checkoutFrameHandle, leftovers, screenshot } from './support/inspect.ts';
import { shopPage } from './support/merchant-site.ts';

let browser: Browser;
let world: CheckoutWorld;

beforeAll(async () => {
  [browser, world] = await Promise.all([launchChromium(), startCheckoutWorld()]);
});

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

type Global = { ServicePay: { init(options: unknown): void; close(): void; version: string } };

/** Runs `ServicePay.init` from the page with recording callbacks and the extra options given. */
function initFromPage(page: Page, options: Record<string, unknown>) {
  return page.evaluate((extra) => {
    const log = (window as unknown as { merchantLog: unknown[] }).merchantLog;
    (window as unknown as Global).ServicePay.init({
      onSuccess: (payload: unknown) => log.push({ callback: 'onSuccess', payload }),
      onError: (payload: unknown) => log.push({ callback: 'onError', payload }),
      ...extra,
    });
  }, options);
}

/** Event listeners on window and document, counted through the DevTools protocol. */
async function listenerCount(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  let total = 0;
  for (const expression of ['window', 'document']) {
    const { result } = await cdp.send('Runtime.evaluate', { expression });
    const { listeners } = await cdp.send('DOMDebugger.getEventListeners', {
      objectId: result.objectId as string,
    });
    total += listeners.length;
  }
  await cdp.detach();
  return total;
}

describe('what the merchant page can and cannot do', () => {
  it('forged messages and look-alike events from the merchant page change nothing', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    await page.evaluate(
      ({ id, reference }) => {
        const forged = { type: 'success', payment: { id, reference, status: 'successful' } };
        window.postMessage(forged, '*');
        const element = document.querySelector('servicepay-checkout');
        const iframe = element?.shadowRoot?.querySelector('iframe');
        const target = iframe?.contentWindow;
        // The nonce is readable from an open shadow root; a second connect still gets nowhere.
        const nonce = new URLSearchParams(new URL(iframe?.src ?? 'http://x').hash.slice(1)).get('n') ?? '';
        // A hello from the page itself has the page's origin, not the widget host's: ignored.
        window.postMessage({ kind: 'servicepay:hello', nonce }, '*');
        for (const guess of [nonce, 'guess']) {
          const channel = new MessageChannel();
          target?.postMessage({ kind: 'servicepay:connect', protocol: 1, nonce: guess }, '*', [
            channel.port2,
          ]);
          channel.port1.postMessage({ type: 'close-requested' });
        }
        target?.postMessage({ type: 'close-requested' }, '*');
        target?.postMessage(forged, '*');
        const lookAlike = new Event('servicepay-success');
        Object.assign(lookAlike, { payment: forged.payment });
        element?.dispatchEvent(lookAlike);
        element?.dispatchEvent(new Event('servicepay-close'));
      },
      { id: session.id, reference: session.reference },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await heading(page).textContent()).toContain('Transfer exactly');
    expect(await merchantLog(page)).toEqual([]);
    expect(await world.sessionStatus(session.id)).toBe('awaiting_payment');
    expect(await page.locator('servicepay-checkout').count()).toBe(1);

    await world.transfer(accountNumber, 500_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('bad init calls are reported, not thrown; unknown options cannot change the amount', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    // No options at all, and no onError to report to: one console error, nothing else.
    await page.evaluate(() => (window as unknown as Global).ServicePay.init(undefined));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^error: ServicePay.init: clientSecret must be/);
    // A malformed secret with an onError: reported there.
    await initFromPage(page, { clientSecret: 'sk_test_not_a_client_secret' });
    await expect.poll(() => merchantLog(page)).toHaveLength(1);
    expect(await merchantLog(page)).toEqual([
      { callback: 'onError', payload: { message: expect.stringContaining('clientSecret') } },
    ]);
    expect(await leftovers(page)).toMatchObject({ checkouts: 0, iframes: 0 });

    // An amount from the page is ignored with a warning: the payer is asked for the session's amount.
    const session = await world.createSession(500_000);
    await initFromPage(page, { clientSecret: session.clientSecret, amount: 100, currency: 'USD' });
    await shownAccountNumber(page);
    expect(await heading(page).textContent()).toContain('₦5,000.00');
    expect(problems.slice(1)).toEqual([
      expect.stringMatching(/^warning: ServicePay.init: option "amount" is ignored/),
      expect.stringMatching(/^warning: ServicePay.init: option "currency" is ignored/),
    ]);

    // A second init while one is open is refused through its own onError; the open one carries on.
    const other = await world.createSession(200_000);
    await initFromPage(page, { clientSecret: other.clientSecret });
    await expect.poll(async () => (await merchantLog(page)).length).toBe(2);
    expect((await merchantLog(page))[1]).toEqual({
      callback: 'onError',
      payload: { message: expect.stringContaining('already open') },
    });
    expect(await page.locator('servicepay-checkout').count()).toBe(1);
    expect(await world.sessionStatus(other.id)).toBe('pending');
    expect(await heading(page).textContent()).toContain('₦5,000.00');
    await context.close();
  });

  it('ServicePay.close() leaves nothing behind: no element, frame, style or listener; the session stays open', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const before = await listenerCount(page);
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    expect(await page.evaluate(() => document.body.getAttribute('style'))).toContain('position: fixed');
    await page.evaluate(() => (window as unknown as Global).ServicePay.close());
    await page.waitForSelector('servicepay-checkout', { state: 'detached' });
    expect(await leftovers(page)).toMatchObject({
      checkouts: 0,
      iframes: 0,
      bodyStyle: null,
      rootStyle: null,
    });
    expect(await listenerCount(page)).toBe(before);
    expect(await merchantLog(page)).toEqual([]);
    // Closed by the merchant, not cancelled by the payer: a transfer already on its way still pays.
    expect(await world.sessionStatus(session.id)).toBe('awaiting_payment');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a pinned script with its published SRI hash loads; a wrong hash is refused by the browser', async () => {
    const { page, context, problems } = await openPage(browser);
    const host = world.server.widgetUrls.test;
    const sri = (await (await fetch(`${host}/v0.1.0/widget.js.sri`)).text()).trim();
    expect(sri).toMatch(/^sha384-[A-Za-z0-9+/]+=*$/);
    await page.goto(
      world.site.page('/pinned.html', shopPage(`${host}/v0.1.0/widget.js`, { integrity: sri }), host),
    );
    expect(await page.evaluate(() => (window as unknown as Global).ServicePay.version)).toBe('0.1.0');
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    expect(await shownAccountNumber(page)).toMatch(/^\d{10}$/);
    expect(problems).toEqual([]);

    const wrong = `sha384-${Buffer.alloc(48).toString('base64')}`;
    await page.goto(
      world.site.page('/tampered.html', shopPage(`${host}/v0.1.0/widget.js`, { integrity: wrong }), host),
    );
    expect(await page.evaluate(() => typeof (window as { ServicePay?: unknown }).ServicePay)).toBe(
      'undefined',
    );
    expect(problems.some((line) => line.includes('integrity'))).toBe(true);
    await context.close();
  });
});

describe('the <servicepay-checkout> element', () => {
  it('opens from its client-secret attribute and fires its DOM events', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await page.evaluate((secret) => {
      const events: Array<{ type: string; payment?: unknown }> = [];
      (window as unknown as { elementEvents: typeof events }).elementEvents = events;
      const element = document.createElement('servicepay-checkout');
      element.setAttribute('client-secret', secret);
      for (const type of [
        'servicepay-success',
        'servicepay-error',
        'servicepay-cancel',
        'servicepay-close',
      ]) {
        element.addEventListener(type, (event) => {
          events.push({
            type,
            ...('payment' in event ? { payment: (event as Event & { payment: unknown }).payment } : {}),
          });
          if (type === 'servicepay-close') element.remove();
        });
      }
      document.body.append(element);
    }, session.clientSecret);
    await world.transfer(await shownAccountNumber(page), 500_000);
    await checkoutFrame(page).getByRole('button', { name: 'Continue' }).click();
    await page.waitForSelector('servicepay-checkout', { state: 'detached' });
    const events = await page.evaluate(
      () => (window as unknown as { elementEvents: unknown[] }).elementEvents,
    );
    expect(events).toEqual([
      {
        type: 'servicepay-success',
        payment: { id: session.id, reference: session.reference, status: 'successful' },
      },
      { type: 'servicepay-close' },
    ]);
    expect(await leftovers(page)).toMatchObject({
      checkouts: 0,
      iframes: 0,
      bodyStyle: null,
      rootStyle: null,
    });
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('names with markup', () => {
  it('render as text, in the frame and the account name', async () => {
    const name = '<img src=x onerror="window.pwned=1"><b>Bold</b> & Co';
    const marked = await (await import('./support/checkout-world.ts')).startCheckoutWorld({
      merchantName: name,
    });
    const { page, context, problems } = await openPage(browser);
    try {
      await page.goto(marked.shopUrl());
      const session = await marked.createSession(500_000, 'test', '<script>window.pwned=2</script>Eve');
      await openCheckout(page, session.clientSecret);
      await shownAccountNumber(page);
      const frame = checkoutFrame(page);
      expect(await frame.locator('.merchant').textContent()).toBe(`Pay ${name}`);
      expect(await frame.locator('.details').textContent()).toContain(`${name} checkout`);
      expect(await frame.locator('img, b, script:not([src])').count()).toBe(0);
      const handle = await checkoutFrameHandle(page);
      expect(await handle.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
      expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
      // The payer's details never reach the browser at all.
      expect(await handle.evaluate(() => document.documentElement.outerHTML.includes('Eve'))).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await marked.close();
    }
  });
});

describe('reach', () => {
  it('usable at 320 px: no sideways scroll, every control reachable by keyboard in order', async () => {
    const { page, context, problems } = await openPage(browser, { width: 320, height: 568 });
    await page.goto(world.shopUrl());
    const session = await world.createSession(123_456_700);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    await screenshot(page, 'narrow-320');
    const handle = await checkoutFrameHandle(page);
    const overflow = await handle.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    // Focus starts on the screen's heading inside the frame; Tab walks copy, the main action, then the close control.
    const focusedInFrame = () =>
      handle.evaluate(() => {
        const app = document.querySelector('servicepay-frame-app');
        const active = app?.shadowRoot?.activeElement;
        return active
          ? (active.getAttribute('aria-label') ?? active.textContent?.trim() ?? active.tagName)
          : null;
      });
    expect(await focusedInFrame()).toContain('Transfer exactly');
    await page.keyboard.press('Tab');
    expect(await focusedInFrame()).toMatch(/^Copy account number \d{10}$/);
    await page.keyboard.press('Tab');
    expect(await focusedInFrame()).toBe("I've sent the money");
    await page.keyboard.press('Tab');
    const hostFocus = await page.evaluate(
      () =>
        document
          .querySelector('servicepay-checkout')
          ?.shadowRoot?.activeElement?.getAttribute('aria-label') ?? null,
    );
    expect(hostFocus).toBe('Close checkout');
    // The close control asks first (a transfer may be on its way); its two answers are next by keyboard.
    await page.keyboard.press('Enter');
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    expect(await focusedInFrame()).toBe('Cancel this payment?');
    await page.keyboard.press('Tab');
    expect(await focusedInFrame()).toBe('Keep paying');
    await page.keyboard.press('Tab');
    expect(await focusedInFrame()).toBe('Cancel payment');
    await page.keyboard.press('Enter');
    await heading(page).filter({ hasText: 'Payment cancelled' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('at 200% zoom, in dark mode, with reduced motion: nothing cut off, nothing moving', async () => {
    const { page, context, problems } = await openPage(browser, {
      width: 640,
      height: 400,
      colorScheme: 'dark',
      reducedMotion: 'reduce',
    });
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    const handle = await checkoutFrameHandle(page);
    const overflow = await handle.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    const background = await handle.evaluate(() => {
      const app = document.querySelector('servicepay-frame-app');
      return app ? getComputedStyle(app).backgroundColor : '';
    });
    expect(background).toBe('rgb(15, 23, 42)');
    await checkoutFrame(page).getByRole('button', { name: "I've sent the money" }).click();
    await heading(page).filter({ hasText: 'Waiting for your transfer' }).waitFor();
    const animation = await handle.evaluate(() => {
      const pulse = document.querySelector('servicepay-frame-app')?.shadowRoot?.querySelector('.pulse');
      return pulse ? getComputedStyle(pulse).animationName : 'missing';
    });
    expect(animation).toBe('none');
    await screenshot(page, 'zoom-200-dark-confirming');
    expect(problems).toEqual([]);
    await context.close();
  });
});
