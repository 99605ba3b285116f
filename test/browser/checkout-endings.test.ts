import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameTexts } from '../../widget/src/texts.ts';
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
import { axeViolations, checkoutFrameHandle, screenshot } from './support/inspect.ts';

// docs/decisions/widget.md, "How a checkout ends": every way the overlay closes ends in exactly one of onSuccess,
// onCancel and onError (none when the page closes it), and the payer reads a payer's words on every screen.
// Real Chromium against the real service; the phone is 320 px wide here, the narrowest the widget promises.
let browser: Browser;
let world: CheckoutWorld;

beforeAll(async () => {
  [browser, world] = await Promise.all([launchChromium(), startCheckoutWorld()]);
});

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

/** Whether the checkout frame scrolls sideways (it must not, even at 320 px). */
async function scrollsSideways(page: Page): Promise<boolean> {
  const frame = await checkoutFrameHandle(page);
  return frame.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
}

/** Everything the payer can read in the checkout frame (the screen and its live region). */
async function frameText(page: Page): Promise<string> {
  const frame = await checkoutFrameHandle(page);
  return frame.evaluate(() => {
    const app = document.querySelector('servicepay-frame-app');
    return app?.shadowRoot?.textContent ?? '';
  });
}

describe('the ERROR screen speaks to the payer; onError to the developer', () => {
  const refusals = [
    {
      name: 'an invalid client secret',
      secret: async () => 'cs_test_NotASecret0',
      payer: frameTexts.linkInvalid,
      code: 'invalid_client_secret',
      shot: '10-error-invalid-secret',
    },
    {
      name: 'a client secret already used',
      secret: async () => {
        const session = await world.createSession(50_000);
        await fetch(`${world.server.baseUrl}/api/widget/bootstrap`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ clientSecret: session.clientSecret }),
        });
        return session.clientSecret;
      },
      payer: frameTexts.linkUsed,
      code: 'client_secret_already_used',
      shot: '10-error-secret-used',
    },
    {
      name: 'the client secret of a session that ended before it was opened',
      secret: async () => {
        const session = await world.createSession(50_000);
        expect((await world.expire(session.id, 'session')).status).toBe(200);
        return session.clientSecret;
      },
      payer: frameTexts.linkEnded,
      code: 'client_secret_expired',
      shot: '10-error-secret-expired',
    },
  ];

  for (const refusal of refusals) {
    it(`${refusal.name}: the payer's words on screen, the service's code in onError, once`, async () => {
      const { page, context, problems } = await openPage(browser, { width: 320, height: 640 });
      await page.goto(world.shopUrl());
      await openCheckout(page, await refusal.secret());
      await heading(page).filter({ hasText: 'Something went wrong' }).waitFor();
      expect(await checkoutFrame(page).locator('.lead').textContent()).toBe(refusal.payer);
      // No developer text anywhere the payer can read: no secret, no code, no API talk.
      const shown = await frameText(page);
      expect(shown).not.toMatch(/cs_test|cs_live|client secret|clientSecret|_secret_|backend|api\//i);
      expect(await merchantLog(page)).toEqual([
        {
          callback: 'onError',
          payload: { message: expect.stringContaining(`POST /api/widget/bootstrap answered 4`) },
        },
      ]);
      expect(JSON.stringify(await merchantLog(page))).toContain(refusal.code);
      expect(await scrollsSideways(page)).toBe(false);
      await screenshot(page, refusal.shot);
      expect(await axeViolations(page)).toEqual([]);
      // Refused before the session was known: the way back has no name to give.
      await checkoutFrame(page).getByRole('button', { name: 'Back to the seller' }).click();
      await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 2_000 });
      expect(await merchantLog(page)).toHaveLength(1);
      // The browser's own line for the refused request; nothing of the widget's.
      expect(problems).toEqual([expect.stringMatching(/status of 4\d\d .*\/api\/widget\/bootstrap\)$/)]);
      await context.close();
    });
  }

  it('a lost connection after the account was shown: onError fires as the payer leaves the ERROR screen, once, with the developer message', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    await context.setOffline(true);
    world.server.dropConnections();
    await heading(page).filter({ hasText: 'Something went wrong' }).waitFor({ timeout: 20_000 });
    expect(await merchantLog(page)).toEqual([]);
    expect(await frameText(page)).not.toContain(session.id);
    await checkoutFrame(page).getByRole('button', { name: 'Back to Ada Stores' }).click();
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 2_000 });
    expect(await merchantLog(page)).toEqual([
      {
        callback: 'onError',
        payload: { message: expect.stringContaining(`GET /api/widget/sessions/${session.id}`) },
      },
    ]);
    // Leaving is not cancelling: the session stays open (a transfer on its way still pays it).
    await context.setOffline(false);
    expect(await world.sessionStatus(session.id)).toBe('awaiting_payment');
    expect(
      problems.filter(
        (line) => !/ERR_INTERNET_DISCONNECTED|Failed to load resource|Failed to fetch/.test(line),
      ),
    ).toEqual([]);
    await context.close();
  }, 45_000);
});

describe("test mode's expiry reaches the open checkout at once", () => {
  it("the session's lifetime: This payment has ended, onCancel once, only the way back (320 px)", async () => {
    const { page, context, problems } = await openPage(browser, { width: 320, height: 640 });
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    const expired = await world.expire(session.id, 'session');
    expect(expired.status).toBe(200);
    expect(expired.body.data.status).toBe('expired');
    await heading(page).filter({ hasText: 'This payment has ended' }).waitFor({ timeout: 5_000 });
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, '8b-session-ended-320');
    expect(await axeViolations(page)).toEqual([]);
    // Escape on the final screen closes; no second callback.
    await page.keyboard.press('Escape');
    await page.waitForSelector('servicepay-checkout', { state: 'detached', timeout: 2_000 });
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("the account's countdown: EXPIRED at once, closing there cancels without asking (no account takes money), a new account pays instead", async () => {
    const { page, context, problems } = await openPage(browser, { width: 320, height: 640 });
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    const first = await shownAccountNumber(page);
    expect((await world.expire(session.id, 'account')).body.data.status).toBe('pending');
    await heading(page).filter({ hasText: 'This account has expired' }).waitFor({ timeout: 5_000 });
    expect(await merchantLog(page)).toEqual([]);
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, '7b-account-expired-320');
    expect(await axeViolations(page)).toEqual([]);

    await checkoutFrame(page).getByRole('button', { name: 'Get a new account number' }).click();
    await heading(page).filter({ hasText: 'Transfer exactly' }).waitFor();
    const second = await shownAccountNumber(page);
    expect(second).not.toBe(first);
    await world.transfer(second, 500_000);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor();
    expect(await merchantLog(page)).toEqual(paidOnce(session));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('closing on EXPIRED cancels at once: CANCELLED, onCancel once', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    await world.expire(session.id, 'account');
    await heading(page).filter({ hasText: 'This account has expired' }).waitFor({ timeout: 5_000 });
    await page.getByRole('button', { name: 'Close checkout' }).click();
    await heading(page).filter({ hasText: 'Payment cancelled' }).waitFor();
    expect(await world.sessionStatus(session.id)).toBe('cancelled');
    expect(await merchantLog(page)).toEqual([{ callback: 'onCancel', payloadLength: 0 }]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the cancel question at 320 px: readable without sideways scrolling, and axe finds nothing', async () => {
    const { page, context, problems } = await openPage(browser, { width: 320, height: 640 });
    await page.goto(world.shopUrl());
    const session = await world.createSession(500_000);
    await openCheckout(page, session.clientSecret);
    await shownAccountNumber(page);
    await page.keyboard.press('Escape');
    await heading(page).filter({ hasText: 'Cancel this payment?' }).waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, '6b-confirm-cancel-320');
    expect(await axeViolations(page)).toEqual([]);
    expect(await merchantLog(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
