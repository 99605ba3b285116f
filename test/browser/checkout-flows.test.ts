import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCountdown } from '../../widget/src/frame/format.ts';
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
import {
  axeViolations,
  checkoutFrameHandle,
  cspViolations,
  leftovers,
  screenshot,
} from './support/inspect.ts';

// One browser and one real service (with both widget hosts) for the whole file; a fresh context per test.
let browser: Browser;
let world: CheckoutWorld;

beforeAll(async () => {
  [browser, world] = await Promise.all([launchChromium(), startCheckoutWorld()]);
});

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

const sessionStatus = (id: string) => world.sessionStatus(id);

describe('the checkout on a plain page with the spec CSP', () => {
  it('pays a test session end to end: every screen on the way, onSuccess once, nothing left behind', async () => {
    const { page, context, problems } = await openPage(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto(world.shopUrl());
    expect(
      await page.evaluate(() => typeof (window as { ServicePay?: { init?: unknown } }).ServicePay?.init),
    ).toBe('function');
    // widget.js creates nothing before init.
    expect(await leftovers(page)).toMatchObject({ checkouts: 0, iframes: 0, bodyStyle: null });

    const session = await world.createSession(500_000);
    // Hold the bootstrap a moment (the real request, later) so INITIALIZING can be seen.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/widget/bootstrap', async (route) => {
      await held;
      await route.continue();
    });
    await page.focus('#pay');
    await openCheckout(page, session.clientSecret);
    await heading(page).filter({ hasText: 'Preparing' }).waitFor();
    await screenshot(page, '1-initializing');
    expect(await axeViolations(page)).toEqual([]);
    release();

    const accountNumber = await shownAccountNumber(page);
    expect(accountNumber).toMatch(/^\d{10}$/);
    const frame = checkoutFrame(page);
    await expect(frame.locator('h1').textContent()).resolves.toContain('₦5,000.00');
    await expect(frame.locator('.details').textContent()).resolves.toContain('ServicePay Test Bank');
    await expect(frame.locator('.details').textContent()).resolves.toContain('Ada Stores checkout');
    await expect(frame.locator('.countdown strong').textContent()).resolves.toMatch(/^(30:00|29:5\d)$/);
    await screenshot(page, '2-awaiting-payment');
    expect(await axeViolations(page)).toEqual([]);

    // The copy button works inside the sandboxed frame.
    await frame.getByRole('button', { name: /Copy account number/ }).click();
    await frame.getByText('Copied', { exact: true }).waitFor();
    // The frame may only write the clipboard (allow="clipboard-write"); the merchant page reads it back.
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(accountNumber);

    await frame.getByRole('button', { name: "I've sent the money" }).click();
    await heading(page).filter({ hasText: 'Waiting for your transfer' }).waitFor();
    await screenshot(page, '3-confirming');
    expect(await axeViolations(page)).toEqual([]);

    expect((await world.transfer(accountNumber, 500_000)).status).toBe(200);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    await screenshot(page, '4-success');
    expect(await axeViolations(page)).toEqual([]);
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(await sessionStatus(session.id)).toBe('successful');

    // Back to the merchant by itself after 3 s: no element, no frame, no style, focus back on the button.
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 6_000 });
    expect(await leftovers(page)).toEqual({
      checkouts: 0,
      iframes: 0,
      bodyStyle: null,
      rootStyle: null,
      focused: 'pay',
    });
    expect(await merchantLog(page)).toHaveLength(1);
    expect(await cspViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the visible continue control returns to the merchant before the 3 s are up', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(120_000);
    await openCheckout(page, session.clientSecret);
    await world.transfer(await shownAccountNumber(page), 120_000);
    await checkoutFrame(page).getByRole('button', { name: 'Continue' }).click();
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 2_000 });
    expect(await merchantLog(page)).toHaveLength(1);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a wrong amount shows MISMATCH (expected against received) and the exact amount still pays', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    expect((await world.transfer(accountNumber, 450_000)).status).toBe(200);
    await heading(page).filter({ hasText: 'The amount did not match' }).waitFor();
    const compare = await checkoutFrame(page).locator('.compare').textContent();
    expect(compare).toContain('₦5,000.00');
    expect(compare).toContain('₦4,500.00');
    // The same account is still shown for the exact amount.
    expect(await checkoutFrame(page).locator('.digits').textContent()).toBe(accountNumber);
    await screenshot(page, '5-mismatch');
    expect(await axeViolations(page)).toEqual([]);
    expect(await merchantLog(page)).toEqual([]);

    await world.transfer(accountNumber, 500_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('Escape asks first (a transfer may be on its way); Cancel payment cancels on the service, CANCELLED shows, onCancel fires once', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(75_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    await page.keyboard.press('Escape');
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    await expect(checkoutFrame(page).locator('.lead').textContent()).resolves.toContain(
      'keep this window open',
    );
    await expect(checkoutFrame(page).locator('[role="status"]').textContent()).resolves.toContain(
      'Cancel this payment?',
    );
    await screenshot(page, '6a-confirm-cancel');
    expect(await axeViolations(page)).toEqual([]);
    // Asking changed nothing yet.
    expect(await sessionStatus(session.id)).toBe('awaiting_payment');
    expect(await merchantLog(page)).toEqual([]);
    await checkoutFrame(page).getByRole('button', { name: 'Cancel payment' }).click();
    await heading(page).filter({ hasText: 'Payment cancelled' }).waitFor();
    await screenshot(page, '6-cancelled');
    expect(await axeViolations(page)).toEqual([]);
    expect(await sessionStatus(session.id)).toBe('cancelled');
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    // A transfer to the closed account is returned, never credited.
    expect((await world.transfer(accountNumber, 75_000)).body.data.outcome).toBe('returned');
    // Escape again on the final screen closes the overlay; onCancel stays at one.
    await page.keyboard.press('Escape');
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 2_000 });
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(await leftovers(page)).toMatchObject({
      checkouts: 0,
      iframes: 0,
      bodyStyle: null,
      rootStyle: null,
    });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the overlay close control asks the same way, and its focus is visible', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(75_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    const close = page.getByRole('button', { name: 'Close checkout' });
    await close.focus();
    const outline = await close.evaluate((element) => getComputedStyle(element).outlineStyle);
    expect(outline).not.toBe('none');
    await close.click();
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    await checkoutFrame(page).getByRole('button', { name: 'Cancel payment' }).click();
    await heading(page).filter({ hasText: 'Payment cancelled' }).waitFor();
    expect(await sessionStatus(session.id)).toBe('cancelled');
    await checkoutFrame(page).getByRole('button', { name: 'Back to Ada Stores' }).click();
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 2_000 });
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('closing while a transfer may be on its way', () => {
  it('Keep paying, Escape or the close control on the question go back to the account: nothing is cancelled, and the transfer pays (onSuccess only)', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(80_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    const frame = checkoutFrame(page);
    await frame.getByRole('button', { name: "I've sent the money" }).click();
    await heading(page).filter({ hasText: 'Waiting for your transfer' }).waitFor();

    await page.getByRole('button', { name: 'Close checkout' }).click();
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    await frame.getByRole('button', { name: 'Keep paying' }).click();
    await heading(page).filter({ hasText: 'Waiting for your transfer' }).waitFor();
    await page.keyboard.press('Escape');
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    await page.keyboard.press('Escape');
    await heading(page).filter({ hasText: 'Waiting for your transfer' }).waitFor();
    await page.getByRole('button', { name: 'Close checkout' }).click();
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    await page.getByRole('button', { name: 'Close checkout' }).click();
    await heading(page).filter({ hasText: 'Waiting for your transfer' }).waitFor();
    expect(await sessionStatus(session.id)).toBe('awaiting_payment');

    // The transfer arrives while the payer is being asked: SUCCESS replaces the question.
    await page.keyboard.press('Escape');
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    await world.transfer(accountNumber, 80_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the bank decides: a transfer credited before the cancel reached the service makes Cancel payment end in SUCCESS, onSuccess only', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(90_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    await page.keyboard.press('Escape');
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    // The payer's bank credits the account while the cancel is on its way: hold the cancel until it has.
    await page.route('**/cancel', async (route) => {
      await world.transfer(accountNumber, 90_000);
      await route.continue();
    });
    await checkoutFrame(page).getByRole('button', { name: 'Cancel payment' }).click();
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await sessionStatus(session.id)).toBe('successful');
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 6_000 });
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    // The browser's own line for the cancel the service refused (409: the payment came first).
    expect(problems).toEqual([expect.stringMatching(/status of 409 .*\/cancel\)$/)]);
    await context.close();
  });
});

describe('the push stream in a real browser', () => {
  it('a dropped network: the stream reconnects with Last-Event-ID and the payment still lands', async () => {
    const { page, context, problems } = await openPage(browser);
    const streamRequests: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/events')) streamRequests.push(request.headers()['last-event-id']);
    });
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    await context.setOffline(true);
    world.server.dropConnections();
    await world.transfer(accountNumber, 500_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await context.setOffline(false);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor({ timeout: 15_000 });
    expect(streamRequests[0]).toBeUndefined();
    expect(streamRequests.slice(1).some((id) => id !== undefined && /^\d+$/.test(id))).toBe(true);
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    // Failed fetches while offline are the browser's own console lines, not the widget's.
    expect(
      problems.filter(
        (line) => !/ERR_INTERNET_DISCONNECTED|Failed to load resource|Failed to fetch/.test(line),
      ),
    ).toEqual([]);
    await context.close();
  });

  it('a network that stays down ends in ERROR with no callback yet (the payment may still land); back online it resumes and the payment lands: onSuccess only', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    await context.setOffline(true);
    world.server.dropConnections();
    await heading(page).filter({ hasText: 'Something went wrong' }).waitFor({ timeout: 20_000 });
    await screenshot(page, '9-error');
    expect(await axeViolations(page)).toEqual([]);
    await expect(checkoutFrame(page).locator('.lead').textContent()).resolves.toBe(
      'We lost the connection to the payment service. If you already sent the money, it is safe.',
    );
    expect(await merchantLog(page)).toEqual([]);
    await checkoutFrame(page).getByRole('button', { name: 'Try again' }).waitFor();
    // Back online, the browser's online event resumes the stream by itself (the button does the same).
    await context.setOffline(false);
    await checkoutFrame(page).locator('.digits').waitFor();
    await world.transfer(accountNumber, 500_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(
      problems.filter(
        (line) => !/ERR_INTERNET_DISCONNECTED|Failed to load resource|Failed to fetch/.test(line),
      ),
    ).toEqual([]);
    await context.close();
  }, 45_000);
});

/** What a tab's trip to the background looks like to the checkout frame: `visibilityState` and its event. */
async function setVisibility(frame: Frame, state: 'hidden' | 'visible'): Promise<void> {
  await frame.evaluate((value) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => value });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => value === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  }, state);
}

/** The push stream's state as the checkout sees it. */
const streamState = (frame: Frame) =>
  frame.evaluate(
    () => (document.querySelector('servicepay-frame-app') as unknown as { streamState: string }).streamState,
  );

describe('a tab in the background', () => {
  it('a frozen tab (timers and network paused) catches up on return: the payment made meanwhile lands', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    const frame = await checkoutFrameHandle(page);
    // The frame notes, every 100 ms, the time and its screen: a frozen frame notes nothing.
    await frame.evaluate(() => {
      const notes: Array<{ at: number; screen: string }> = [];
      (window as unknown as { notes: typeof notes }).notes = notes;
      const app = document.querySelector('servicepay-frame-app') as unknown as { screen: string };
      setInterval(() => notes.push({ at: Date.now(), screen: app.screen }), 100);
    });
    // Headless pages are always visible, and Page.setWebLifecycleState does not freeze a visible page; the
    // debugger's pause does what a freeze does to the page: no script runs in it or its frame, no timer fires,
    // and what the stream receives waits unread.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Debugger.enable');
    await cdp.send('Debugger.pause');
    const frozenAt = Date.now();
    await world.transfer(accountNumber, 500_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const resumedAt = Date.now();
    await cdp.send('Debugger.resume');
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    const notes = await frame.evaluate(
      () => (window as unknown as { notes: Array<{ at: number; screen: string }> }).notes,
    );
    // Nothing ran while frozen, and the payment showed only after the return.
    expect(notes.filter((note) => note.at > frozenAt + 300 && note.at < resumedAt)).toEqual([]);
    expect(notes.find((note) => note.screen === 'success')?.at).toBeGreaterThanOrEqual(resumedAt);
    await cdp.detach();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the countdown is right the moment a tab that slept comes back', async () => {
    const { page, context, problems } = await openPage(browser);
    let expiresAt = '';
    page.on('response', async (response) => {
      if (response.url().endsWith('/api/widget/bootstrap') && response.ok())
        expiresAt = (await response.json()).data.virtualAccount.expiresAt;
    });
    // Fake timers in the page and its frame, so the test decides when the frame's clock moves.
    await context.clock.install();
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    const frame = await checkoutFrameHandle(page);
    const countdown = checkoutFrame(page).locator('.countdown strong');
    await expect(countdown.textContent()).resolves.toMatch(/^(30:00|29:5\d)$/);

    // The tab goes to the background and the laptop sleeps 12 minutes: no timer fires meanwhile.
    await setVisibility(frame, 'hidden');
    await page.clock.pauseAt(Date.now() + 1_000);
    const beforeSleep = await countdown.textContent();
    await page.clock.setSystemTime((await frame.evaluate(() => Date.now())) + 12 * 60_000);
    expect(await countdown.textContent()).toBe(beforeSleep);

    // Back in front: the countdown is recomputed from the account's expiresAt before any timer fires.
    await setVisibility(frame, 'visible');
    const now = await frame.evaluate(() => Date.now());
    await expect.poll(() => countdown.textContent()).toBe(formatCountdown(Date.parse(expiresAt) - now));
    expect(await countdown.textContent()).toMatch(/^1[78]:\d\d$/);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a tab back from the background resumes the stream with Last-Event-ID: the payment made meanwhile shows', async () => {
    const { page, context, problems } = await openPage(browser);
    const streamRequests: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/events')) streamRequests.push(request.headers()['last-event-id']);
    });
    await context.clock.install();
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const accountNumber = await shownAccountNumber(page);
    const frame = await checkoutFrameHandle(page);
    await expect.poll(() => streamState(frame)).toBe('open');

    // In the background the stream's connection drops, and its timers (the retry after about a second, the
    // service's `retry:`) do not fire.
    await setVisibility(frame, 'hidden');
    await page.clock.pauseAt(Date.now() + 1_000);
    world.server.dropConnections();
    await expect.poll(() => streamState(frame)).toBe('reconnecting');
    await world.transfer(accountNumber, 500_000);
    expect(streamRequests).toHaveLength(1);

    // Back in front: the stream reconnects at once, says where it stopped, and the service replays the payment.
    await setVisibility(frame, 'visible');
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(streamRequests).toHaveLength(2);
    expect(streamRequests[0]).toBeUndefined();
    expect(streamRequests[1]).toMatch(/^\d+$/);
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    // The browser's own line for the stream the service cut, not the widget's.
    const cut = /ERR_INCOMPLETE_CHUNKED_ENCODING .*\/events\)$/;
    expect(problems.filter((line) => !cut.test(line))).toEqual([]);
    await context.close();
  });
});

describe('environments', () => {
  it('a cs_test_ secret on the production host ends in ERROR naming the test host, and the secret is not spent', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl('live'));
    const session = await world.createSession(30_000, 'test');
    await openCheckout(page, session.clientSecret);
    await heading(page).filter({ hasText: 'Something went wrong' }).waitFor();
    const log = await merchantLog(page);
    expect(log).toHaveLength(1);
    expect(log[0]?.callback).toBe('onError');
    expect(log[0]).toEqual({
      callback: 'onError',
      payload: { message: expect.stringContaining(`${world.server.widgetUrls.test}/latest/widget.js`) },
    });
    // The payer reads a payer's words; the host to load is for the developer, in onError.
    expect(await checkoutFrame(page).locator('.lead').textContent()).toBe(
      'This checkout could not be opened. Go back to the seller and try again.',
    );
    expect(await sessionStatus(session.id)).toBe('pending');

    // The same secret still opens on the right host.
    await page.goto(world.shopUrl('test'));
    await openCheckout(page, session.clientSecret);
    expect(await shownAccountNumber(page)).toMatch(/^\d{10}$/);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a cs_live_ secret on the test host names the production host', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl('test'));
    const session = await world.createSession(30_000, 'live');
    await openCheckout(page, session.clientSecret);
    await heading(page).filter({ hasText: 'Something went wrong' }).waitFor();
    const log = await merchantLog(page);
    expect(log[0]).toEqual({
      callback: 'onError',
      payload: { message: expect.stringContaining(`${world.server.widgetUrls.live}/latest/widget.js`) },
    });
    expect(await world.sessionStatus(session.id, 'live')).toBe('pending');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a live session pays on the production host (its CSP names that host)', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl('live'));
    const session = await world.createSession(30_000, 'live');
    await openCheckout(page, session.clientSecret);
    expect(await shownAccountNumber(page)).toMatch(/^\d{10}$/);
    expect(await checkoutFrame(page).locator('.badge').count()).toBe(0);
    expect(await cspViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
