import type { Browser } from 'playwright-core';
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
import { axeViolations, screenshot } from './support/inspect.ts';

// Short clocks, for real: each virtual account lives 3 s, each session 9 s, swept every 200 ms.
let browser: Browser;
let world: CheckoutWorld;

beforeAll(async () => {
  [browser, world] = await Promise.all([
    launchChromium(),
    startCheckoutWorld({
      config: { accountLifetimeMinutes: 0.05, sessionLifetimeMinutes: 0.15, sweepIntervalMs: 200 },
    }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

describe('the account and the session run out', () => {
  it('EXPIRED when the account runs out; retry gets a new account that pays', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const first = await shownAccountNumber(page);
    await expect(checkoutFrame(page).locator('.countdown strong').textContent()).resolves.toMatch(
      /^00:0[1-3]$/,
    );
    // The last-minute milestone is announced politely (the countdown itself is not read out every second).
    await expect
      .poll(() => checkoutFrame(page).locator('[role="status"]').textContent(), { timeout: 3_000 })
      .toBe('One minute left to transfer.');
    expect(await checkoutFrame(page).locator('[role="status"]').getAttribute('aria-live')).toBe('polite');
    await heading(page).filter({ hasText: 'This account has expired' }).waitFor({ timeout: 6_000 });
    await screenshot(page, '7-expired');
    expect(await axeViolations(page)).toEqual([]);
    // Wait for the service's own word (the sweeper) before retrying, so the retry really gets a new account.
    await expect.poll(() => world.sessionStatus(session.id), { timeout: 3_000 }).toBe('pending');

    await checkoutFrame(page).getByRole('button', { name: 'Get a new account number' }).click();
    await heading(page).filter({ hasText: 'Transfer exactly' }).waitFor();
    const second = await shownAccountNumber(page);
    expect(second).toMatch(/^\d{10}$/);
    expect(second).not.toBe(first);
    // The old account is closed: the bank returns money sent there.
    expect((await world.transfer(first, 500_000)).body.data.outcome).toBe('returned');
    expect((await world.transfer(second, 500_000)).body.data.outcome).toBe('credited');
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(problems).toEqual([]);
    await context.close();
  });

  it("EXPIRED's Back to {merchant} cancels the session on the service and fires onCancel once", async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    await heading(page).filter({ hasText: 'This account has expired' }).waitFor({ timeout: 6_000 });
    await expect.poll(() => world.sessionStatus(session.id), { timeout: 3_000 }).toBe('pending');

    await checkoutFrame(page).getByRole('button', { name: 'Back to Ada Stores' }).click();
    await heading(page).filter({ hasText: 'Payment cancelled' }).waitFor();
    expect(await world.sessionStatus(session.id)).toBe('cancelled');
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    // CANCELLED goes back to the shop by itself; onCancel stays at one.
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 6_000 });
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a session that ended for good says so, offers only the way back, and ends the checkout with onCancel once', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    await heading(page).filter({ hasText: 'This payment has ended' }).waitFor({ timeout: 15_000 });
    // The checkout has ended without a payment: the page hears it at once, not only once the payer leaves.
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    await screenshot(page, '8-session-ended');
    expect(await axeViolations(page)).toEqual([]);
    const buttons = await checkoutFrame(page).locator('main button').allTextContents();
    expect(buttons.map((text) => text.trim())).toEqual(['Back to Ada Stores']);
    expect((await checkoutFrame(page).locator('.lead').textContent())?.trim()).toBe(
      'The time to pay ran out, so this payment can no longer be completed.',
    );
    expect(await world.sessionStatus(session.id)).toBe('expired');
    await checkoutFrame(page).getByRole('button', { name: 'Back to Ada Stores' }).click();
    await page.waitForSelector('servicepay-checkout', { state: 'detached' });
    // Exactly one callback: leaving adds none.
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
