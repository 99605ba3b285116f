import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../reference-server/src/portal/portal-auth.ts';
import { bootstrap, call, createSession, retrieveSession } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The developer portal in real headless Chromium against the real server: sign-in, every page, the actions
// that change something (roll, reveal, resend, transfers, the switch to live, sign-out), CSRF and cross-business refusals,
// and axe-core on every page in light and dark.

const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
const AXE = readFileSync(
  fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)),
  'utf8',
);
const MARKUP_NAME = '<img src=x onerror="window.__pwned=1">Ada <b>Lovelace</b>';

let server: RunningServer;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;
let other: Awaited<ReturnType<RunningServer['createBusiness']>>;
let otherSessionId: string;
let endpointId: string;
let endpointSecret: string;
const consoleErrors: string[] = [];
/** Sessions whose first webhook delivery the receiver answers 500, as a handler that fails once would. */
const failFirstDelivery = new Set<string>();

/** Polls a locator's text (server-rendered pages settle at once; polling covers navigation). */
const hasText = (locator: Locator, text: string) => expect.poll(() => locator.innerText()).toContain(text);
const lacksText = (locator: Locator, text: string) =>
  expect.poll(() => locator.innerText()).not.toContain(text);
const hasExactText = (locator: Locator, text: string) =>
  expect.poll(async () => (await locator.innerText()).trim()).toBe(text);
const hasAttribute = (locator: Locator, name: string, value: string) =>
  expect.poll(() => locator.getAttribute(name)).toBe(value);
const hasCount = (locator: Locator, count: number) => expect.poll(() => locator.count()).toBe(count);
const isVisible = (locator: Locator) => expect.poll(() => locator.isVisible()).toBe(true);

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: 'Ada\'s <script>alert("x")</script> Bakery' });
  other = await server.createBusiness({ name: 'Other Shop' });
  otherSessionId = (await createSession(server.baseUrl, other.keys.test.secretKey)).id;
  receiver = await startReceiver((received, res) => {
    const sessionId = received.body.data?.session?.id as string;
    if (failFirstDelivery.delete(sessionId)) {
      res.statusCode = 500;
      res.end('handler crashed');
    } else {
      res.end('ok');
    }
  });
  const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
    token: shop.keys.test.secretKey,
    json: { url: receiver.url, description: '<i>orders</i> handler' },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  endpointId = endpoint.body.data.id;
  endpointSecret = endpoint.body.data.secret;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

/** A session of the shop whose checkout opened: it has an account that takes money. */
async function openSession(amount: number, reference: string) {
  const created = await createSession(server.baseUrl, shop.keys.test.secretKey, {
    amount,
    reference,
    payer: { name: MARKUP_NAME, email: 'ada@example.com' },
    metadata: { order: '<script>alert(1)</script>', note: '"quoted" & <tagged>' },
  });
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  return { id: created.id, accountNumber: opened.virtualAccount.accountNumber };
}

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  page.on('dialog', (dialog) => {
    consoleErrors.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page };
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${server.baseUrl}/portal/sign-in`);
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/portal/sessions');
}

/** axe-core in the page (evaluated through the debugging protocol, so the page's CSP stays as it is). */
async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const violations = await page.evaluate(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: axe is injected at run time
      const axe = (window as any).axe;
      const result = await axe.run(document);
      return result.violations.map(
        (violation: { id: string; nodes: Array<{ target: string[] }> }) =>
          `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
      );
    });
    expect(violations, `${label} (${scheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}

describe('developer portal', () => {
  it('signs in with a secret key and sets a session cookie that is HttpOnly, SameSite=Strict, Path=/portal', async () => {
    const { context, page } = await newPage();
    await page.goto(`${server.baseUrl}/portal`);
    await expect.poll(() => page.url()).toContain('/portal/sign-in');
    await expectNoAxeViolations(page, 'sign-in');
    await shoot(page, 'sign-in');
    // Keyboard first: the first Tab lands on a visible skip link, and focus is drawn.
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement;
      const style = getComputedStyle(element);
      return {
        text: element.textContent,
        outline: style.outlineStyle,
        top: element.getBoundingClientRect().top,
      };
    });
    expect(focused.text).toBe('Skip to content');
    expect(focused.outline).not.toBe('none');
    expect(focused.top).toBeGreaterThanOrEqual(0);

    // A publishable key is public: it signs nobody in.
    await page.getByLabel('Secret key').fill(shop.keys.test.publishableKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await hasText(page.getByRole('alert'), 'publishable key');
    await expectNoAxeViolations(page, 'sign-in with an error');

    await signIn(page, shop.keys.test.secretKey);
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === SESSION_COOKIE);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal' });
    // The cookie is a random id: not the key, and the database keeps only its hash.
    expect(session?.value).not.toContain(shop.keys.test.secretKey.slice(8));
    const stored = server.service.db
      .prepare('SELECT count(*) AS n FROM portal_sessions WHERE id_hash = ?')
      .get(Buffer.from(session?.value ?? '')) as { n: number };
    expect(stored.n).toBe(0);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await context.close();
  });

  it('shows sessions with filters and paging, and a session with its history and account, escaping markup', async () => {
    const first = await openSession(250_000, 'order-filter-1');
    const created = await createSession(server.baseUrl, shop.keys.test.secretKey, {
      reference: 'order-pending',
    });
    for (let index = 0; index < 21; index += 1) {
      await createSession(server.baseUrl, shop.keys.test.secretKey, { reference: `bulk-${index}` });
    }
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    await hasText(page.getByRole('heading', { level: 1 }), 'Sessions');
    await hasText(page.getByRole('banner'), 'Ada\'s <script>alert("x")</script> Bakery');
    await hasCount(page.locator('tbody tr'), 20);
    await expectNoAxeViolations(page, 'sessions');
    await shoot(page, 'sessions');

    await page.getByRole('link', { name: 'Older sessions' }).click();
    await hasText(page.getByRole('table'), 'order-filter-1');
    await lacksText(page.getByRole('table'), 'bulk-20');

    await page.goto(`${server.baseUrl}/portal/sessions`);
    await page.getByLabel('Status').selectOption('awaiting_payment');
    await page.getByRole('button', { name: 'Filter' }).click();
    await hasCount(page.locator('tbody tr'), 1);
    await hasText(page.getByRole('table'), 'order-filter-1');
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Reference').fill('order-pending');
    await page.getByRole('button', { name: 'Filter' }).click();
    await hasCount(page.locator('tbody tr'), 1);
    await hasAttribute(
      page.getByRole('link', { name: 'order-pending' }),
      'href',
      `/portal/sessions/${created.id}`,
    );

    await page.goto(`${server.baseUrl}/portal/sessions/${first.id}`);
    await hasText(page.getByRole('heading', { level: 1 }), 'order-filter-1');
    await hasText(page.getByRole('main'), MARKUP_NAME);
    await hasText(page.getByRole('main'), '<script>alert(1)</script>');
    await hasText(page.getByRole('main'), first.accountNumber);
    const history = page.getByRole('region', { name: 'Status history' });
    await hasText(history, 'Awaiting payment');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await expectNoAxeViolations(page, 'session detail');
    await shoot(page, 'session-detail');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shoot(page, 'session-detail-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await page.setViewportSize({ width: 320, height: 800 });
    for (const path of ['/portal/sessions', `/portal/sessions/${first.id}`, '/portal/keys', '/portal/bank']) {
      await page.goto(`${server.baseUrl}${path}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await shoot(page, 'bank-320px');
    await context.close();
  });

  it('sends a wrong then the right amount from the test bank and the session turns mismatch, then successful', async () => {
    const opened = await openSession(500_000, 'order-bank');
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    await page.getByRole('link', { name: 'Test bank' }).click();
    await hasText(page.getByRole('table'), 'order-bank');
    await expectNoAxeViolations(page, 'bank');
    await shoot(page, 'bank');

    const row = page.getByRole('row').filter({ hasText: 'order-bank' });
    await row.getByLabel('Other amount (minor units)').fill('400000');
    await row.getByRole('button', { name: 'Send this amount' }).click();
    await page.waitForURL(`**/portal/sessions/${opened.id}?**`);
    await hasText(page.getByRole('status'), 'returned');
    await hasText(page.getByRole('heading', { level: 1 }), 'Mismatch');
    const mismatched = await retrieveSession(server.baseUrl, shop.keys.test.secretKey, opened.id);
    expect(mismatched.status).toBe('mismatch');
    expect(mismatched.lastMismatch).toEqual({ expectedAmount: 500_000, receivedAmount: 400_000 });
    await expectNoAxeViolations(page, 'session after a transfer');
    await shoot(page, 'session-mismatch');

    // The session page carries the same bank buttons; the exact amount pays it.
    await page.getByRole('button', { name: /^Send NGN/ }).click();
    await page.waitForURL(`**/portal/sessions/${opened.id}?**`);
    await hasText(page.getByRole('status'), 'credited');
    await hasText(page.getByRole('heading', { level: 1 }), 'Successful');
    const paid = await retrieveSession(server.baseUrl, shop.keys.test.secretKey, opened.id);
    expect(paid.status).toBe('successful');
    expect(paid.amount).toBe(500_000);
    // A reload shows the result again and moves no money: the post was answered with a redirect.
    await page.reload();
    const transfers = server.service.db
      .prepare('SELECT amount FROM bank_transfers WHERE account_number = ? ORDER BY created_at')
      .all(opened.accountNumber) as Array<{ amount: number }>;
    expect(transfers.map((transfer) => transfer.amount)).toEqual([400_000, 500_000]);
    await hasText(page.locator('.timeline'), 'Successful');
    await expect
      .poll(() =>
        receiver.received.filter((entry) => entry.body.data.session.id === opened.id).map((e) => e.body.type),
      )
      .toEqual(expect.arrayContaining(['session.mismatch', 'session.successful']));
    await context.close();
  });

  it("expires a test session's account, then the session itself, from its page: pending with a new account to come, then expired with its webhook", async () => {
    const opened = await openSession(250_000, 'order-expire');
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    await page.goto(`${server.baseUrl}/portal/sessions/${opened.id}`);
    const endings = page.getByRole('region', { name: 'Test endings' });
    await expectNoAxeViolations(page, 'session with its test endings');

    await endings.getByRole('button', { name: 'Expire the account now' }).click();
    await page.waitForURL(`**/portal/sessions/${opened.id}?ended=account`);
    await hasText(page.getByRole('status'), 'countdown was ended now');
    await hasText(page.getByRole('heading', { level: 1 }), 'Pending');
    await hasText(page.locator('.timeline'), 'the account ran out with no transfer');
    expect((await retrieveSession(server.baseUrl, shop.keys.test.secretKey, opened.id)).status).toBe(
      'pending',
    );
    // No account takes money now: only the session's own end is left to run out.
    await hasCount(endings.getByRole('button', { name: 'Expire the account now' }), 0);
    await shoot(page, 'session-account-expired');

    await endings.getByRole('button', { name: 'Expire the session now' }).click();
    await page.waitForURL(`**/portal/sessions/${opened.id}?ended=session`);
    await hasText(page.getByRole('status'), 'It is expired');
    await hasText(page.getByRole('heading', { level: 1 }), 'Expired');
    await hasCount(page.getByRole('region', { name: 'Test endings' }), 0);
    const expired = await retrieveSession(server.baseUrl, shop.keys.test.secretKey, opened.id);
    expect(expired.status).toBe('expired');
    await expect
      .poll(() =>
        receiver.received.filter((entry) => entry.body.data.session.id === opened.id).map((e) => e.body.type),
      )
      .toEqual(['session.expired']);
    // A reload ends nothing again; a repeated post is refused with the 409 page and changes nothing.
    await page.reload();
    const again = await page.request.post(`${server.baseUrl}/portal/sessions/${opened.id}/expire`, {
      headers: { origin: server.baseUrl },
      form: { _csrf: await page.locator('input[name="_csrf"]').first().inputValue(), ending: 'session' },
    });
    expect(again.status()).toBe(409);
    const events = await server.rows<{ type: string }>(
      "SELECT type FROM events WHERE session_id = ? AND type IN ('session.pending', 'session.expired') ORDER BY seq",
      opened.id,
    );
    expect(events.map((event) => event.type)).toEqual(['session.pending', 'session.expired']);
    await context.close();
  });

  it('lists webhook endpoints, reveals a secret after a confirm, shows every attempt and resends a delivery', async () => {
    const opened = await openSession(120_000, 'order-webhook');
    // The handler fails the first delivery; the fast schedule tries again within a second.
    failFirstDelivery.add(opened.id);
    await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: shop.keys.test.secretKey,
      json: { accountNumber: opened.accountNumber, amount: 120_000 },
    });
    const forSession = () => receiver.received.filter((entry) => entry.body.data.session.id === opened.id);
    await expect.poll(() => forSession().length).toBe(2);
    const eventId = forSession()[0]?.body.id as string;
    expect(forSession()[1]?.body.id).toBe(eventId);

    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await hasText(page.getByRole('table'), receiver.url);
    await hasText(page.getByRole('table'), '<i>orders</i> handler');
    await expectNoAxeViolations(page, 'webhooks');
    await shoot(page, 'webhooks');

    await page.getByRole('link', { name: receiver.url }).click();
    await lacksText(page.getByRole('main'), endpointSecret);
    const delivery = page.locator('.delivery').filter({ hasText: eventId });
    await hasCount(delivery, 1);
    // Every attempt, in order: the handler's 500, then the retry's 200 (reloaded until the service has recorded
    // the retry's answer).
    const attempts = delivery.getByRole('table').locator('tbody tr');
    await expect
      .poll(async () => {
        await page.reload();
        return attempts.evaluateAll((rows) => rows.map((row) => row.children[2]?.textContent?.trim()));
      })
      .toEqual(['500', '200']);
    await hasText(delivery, 'succeeded');
    await expectNoAxeViolations(page, 'endpoint');

    await page.getByLabel(/Show the secret on this screen/).check();
    await page.getByRole('button', { name: 'Reveal signing secret' }).click();
    await hasExactText(page.locator('#endpoint-secret'), endpointSecret);
    await expectNoAxeViolations(page, 'endpoint with its secret');
    await shoot(page, 'endpoint-secret');

    await page.goto(`${server.baseUrl}/portal/webhooks/${endpointId}`);
    await delivery
      .getByRole('button', { name: `Resend event ${eventId}` })
      .first()
      .click();
    await hasText(page.getByRole('status'), 'Resent');
    await expect.poll(() => forSession().length).toBe(3);
    expect(forSession().map((entry) => entry.body.id)).toEqual([eventId, eventId, eventId]);
    await page.reload();
    await hasCount(page.locator('.delivery').filter({ hasText: eventId }), 2);
    await shoot(page, 'endpoint-deliveries');

    const enabledAtService = async () =>
      (await call(server.baseUrl, 'GET', `/api/webhooks/${endpointId}`, { token: shop.keys.test.secretKey }))
        .body.data.enabled;
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await hasText(page.getByRole('status'), 'Endpoint disabled');
    expect(await enabledAtService()).toBe(false);
    await expectNoAxeViolations(page, 'endpoint disabled');
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await hasText(page.getByRole('status'), 'Endpoint enabled');
    expect(await enabledAtService()).toBe(true);

    // A second endpoint added in the portal: its secret is shown once, on the page that answers the form.
    // (Nothing listens at its URL, and no event of this shop follows in this file.)
    await page.goto(`${server.baseUrl}/portal/webhooks`);
    await page.getByLabel('URL').fill('http://127.0.0.1:9/portal-added');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await hasText(page.getByRole('status'), 'Endpoint added');
    await hasText(page.locator('#new-secret'), 'whsec_');
    await expectNoAxeViolations(page, 'webhook endpoint added');
    await context.close();
  });

  it('deletes an endpoint after a confirm: gone from the list and the API, and sent nothing more', async () => {
    const deleting = await server.createBusiness({ name: 'Deleting Shop' });
    const key = deleting.keys.test.secretKey;
    const kept = await startReceiver();
    const removed = await startReceiver();
    try {
      const register = async (url: string) =>
        (await call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url } })).body.data
          .id as string;
      await register(kept.url);
      const removedId = await register(removed.url);
      const listedUrls = async () =>
        (await call(server.baseUrl, 'GET', '/api/webhooks', { token: key })).body.data.map(
          (endpoint: { url: string }) => endpoint.url,
        );

      const { context, page } = await newPage();
      await signIn(page, key);
      await page.goto(`${server.baseUrl}/portal/webhooks/${removedId}`);
      await expectNoAxeViolations(page, 'endpoint with the delete form');
      // Without the tick the browser does not send the form: the endpoint stays.
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await hasCount(page.locator('#confirm-delete:invalid'), 1);
      expect((await page.goto(`${server.baseUrl}/portal/webhooks/${removedId}`))?.status()).toBe(200);
      expect(await listedUrls()).toContain(removed.url);

      await page.getByLabel('I understand deliveries to this URL stop at once').check();
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await page.waitForURL('**/portal/webhooks?deleted=1');
      await hasText(page.getByRole('status'), 'Endpoint deleted');
      await hasText(page.getByRole('table'), kept.url);
      await lacksText(page.getByRole('main'), removed.url);
      await expectNoAxeViolations(page, 'endpoint deleted');
      await shoot(page, 'endpoint-deleted');
      expect(await listedUrls()).toEqual([kept.url]);
      await context.close();

      // A payment after the delete reaches the endpoint that is left, and nothing reaches the deleted one.
      const created = await createSession(server.baseUrl, key, { amount: 5_000, reference: 'after-delete' });
      const opened = await bootstrap(server.baseUrl, created.clientSecret);
      await call(server.baseUrl, 'POST', '/api/test/transfers', {
        token: key,
        json: { accountNumber: opened.virtualAccount.accountNumber, amount: 5_000 },
      });
      await expect.poll(() => kept.received.length).toBe(1);
      expect(removed.received).toEqual([]);
    } finally {
      await kept.close();
      await removed.close();
    }
  });

  it('rolls a key: the new secret is shown once and the old key is refused by the API at once', async () => {
    const rolling = await server.createBusiness({ name: 'Rolling Shop' });
    const oldKey = rolling.keys.test.secretKey;
    const { context, page } = await newPage();
    await signIn(page, oldKey);
    // Another browser signed in with the same key (say, whoever it leaked to).
    const elsewhere = await newPage();
    await signIn(elsewhere.page, oldKey);
    await page.getByRole('link', { name: 'API keys' }).click();
    const secretRow = page.getByRole('row').filter({ hasText: 'Secret key' });
    await hasText(secretRow, `sk_test_…${oldKey.slice(-4)}`);
    await lacksText(page.getByRole('main'), oldKey);
    await expectNoAxeViolations(page, 'keys');
    await shoot(page, 'keys');

    await secretRow.getByLabel(/stops working at once/).check();
    await secretRow.getByRole('button', { name: 'Roll secret key' }).click();
    const newKey = (await page.locator('#new-key').textContent()) ?? '';
    expect(newKey).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    await hasText(page.getByRole('status'), `sk_test_…${oldKey.slice(-4)}`);
    await expectNoAxeViolations(page, 'keys after a roll');
    await shoot(page, 'keys-rolled');
    expect(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: oldKey })).body.meta.code,
    ).toBe('api_key_revoked');
    expect((await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: newKey })).status).toBe(200);
    // The audit log names the portal and the key the portal session was opened with, never a key itself.
    const oldKeyId = (
      server.service.db
        .prepare(
          "SELECT id FROM api_keys WHERE business_id = ? AND kind = 'secret' AND revoked_at IS NOT NULL",
        )
        .get(rolling.business.id) as { id: string }
    ).id;
    const audited = server.service.db
      .prepare("SELECT actor, action FROM audit_log WHERE business_id = ? AND action = 'api_key.rolled'")
      .all(rolling.business.id);
    expect(audited).toEqual([{ actor: `portal:${oldKeyId}`, action: 'api_key.rolled' }]);
    // The session that rolled the key carries on; the other one, opened with the old key, has ended.
    await elsewhere.page.goto(`${server.baseUrl}/portal/keys`);
    await expect.poll(() => elsewhere.page.url()).toContain('/portal/sign-in');
    await elsewhere.context.close();
    // Shown once: the keys page now shows only its prefix and last four.
    await page.goto(`${server.baseUrl}/portal/keys`);
    expect(page.url()).toContain('/portal/keys');
    await lacksText(page.getByRole('main'), newKey);
    await hasText(page.getByRole('row').filter({ hasText: 'Secret key' }), `sk_test_…${newKey.slice(-4)}`);
    await context.close();
  });

  it('switches to live data only through a sign-in with the live secret key, never touching API routing', async () => {
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    await page.getByRole('link', { name: 'API keys' }).click();
    await hasAttribute(page.getByText('Test data', { exact: true }), 'aria-current', 'true');
    await page.getByRole('link', { name: 'Live data' }).click();
    await page.waitForURL('**/portal/sign-in?**');
    await hasExactText(page.getByRole('heading', { level: 1 }), 'Sign in to live data');
    await expectNoAxeViolations(page, 'sign in to live');
    // The test key the browser signed in with does not open live data.
    await page.getByLabel('Secret key').fill(shop.keys.test.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await hasText(page.getByRole('alert'), 'That is a test key');
    await page.getByLabel('Secret key').fill(shop.keys.live.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/portal/keys');
    await hasAttribute(page.getByText('Live data', { exact: true }), 'aria-current', 'true');
    await hasText(page.getByRole('row').filter({ hasText: 'Secret key' }), 'sk_live_…');
    await isVisible(page.getByText('Live keys answer 403 until your KYC is approved.'));
    await expectNoAxeViolations(page, 'keys live');
    await page.getByRole('link', { name: 'Sessions' }).click();
    await hasText(page.getByRole('main'), 'No live sessions yet');
    await page.getByRole('link', { name: 'Test bank' }).click();
    await hasText(page.getByRole('main'), 'Sign in with your test secret key');
    await page.getByRole('link', { name: 'KYC' }).click();
    await hasText(page.getByRole('main'), 'Pending review');
    await hasText(page.getByRole('main'), `kyc approve --business ${shop.business.id}`);
    await expectNoAxeViolations(page, 'kyc');
    await shoot(page, 'kyc-live');

    // The API still routes by key: the test key sees test sessions, whatever the portal shows.
    const listed = await call(server.baseUrl, 'GET', '/api/widget/sessions', {
      token: shop.keys.test.secretKey,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.length).toBeGreaterThan(0);
    expect(listed.body.data.every((session: { environment: string }) => session.environment === 'test')).toBe(
      true,
    );

    // Back to test data: the switch asks for the test key, and comes back to the page it left.
    await page.getByRole('link', { name: 'Test data' }).click();
    await page.waitForURL('**/portal/sign-in?**');
    await hasExactText(page.getByRole('heading', { level: 1 }), 'Sign in to test data');
    await page.getByLabel('Secret key').fill(shop.keys.test.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/portal/kyc');
    await hasAttribute(page.getByText('Test data', { exact: true }), 'aria-current', 'true');
    await context.close();
  });

  it('refuses a post without the CSRF token or from another origin with a 403 page, and changes nothing', async () => {
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    await page.goto(`${server.baseUrl}/portal/keys`);
    const keyCount = () =>
      (
        server.service.db
          .prepare('SELECT count(*) AS n FROM api_keys WHERE business_id = ?')
          .get(shop.business.id) as { n: number }
      ).n;
    const before = keyCount();
    // Same origin, the session cookie attached, but no token: what a forged form would send.
    const answer = await page.evaluate(async () => {
      const response = await fetch('/portal/keys/roll', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'environment=test&kind=secret&confirm=yes',
      });
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        text: await response.text(),
      };
    });
    expect(answer.status).toBe(403);
    expect(answer.type).toContain('text/html');
    expect(answer.text).toContain('This form has expired');
    // A token from the page, but posted by another origin with the cookie (what SameSite would normally stop).
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const cookie = (await context.cookies()).find((entry) => entry.name === SESSION_COOKIE);
    const forged = await fetch(`${server.baseUrl}/portal/keys/roll`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://evil.example',
        cookie: `${SESSION_COOKIE}=${cookie?.value}`,
      },
      body: new URLSearchParams({ _csrf: token, environment: 'test', kind: 'secret', confirm: 'yes' }),
    });
    expect(forged.status).toBe(403);
    expect(keyCount()).toBe(before);
    expect(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: shop.keys.test.secretKey })).status,
    ).toBe(200);
    // JSON is not a portal form.
    const json = await fetch(`${server.baseUrl}/portal/keys/roll`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: server.baseUrl,
        cookie: `${SESSION_COOKIE}=${cookie?.value}`,
      },
      body: JSON.stringify({ _csrf: token, environment: 'test', kind: 'secret', confirm: 'yes' }),
    });
    expect(json.status).toBe(415);
    expect(keyCount()).toBe(before);
    await context.close();
  });

  it("refuses another business's session and endpoint with a 403 page", async () => {
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    const response = await page.goto(`${server.baseUrl}/portal/sessions/${otherSessionId}`);
    expect(response?.status()).toBe(403);
    await hasExactText(page.getByRole('heading', { level: 1 }), 'Not allowed');
    await lacksText(page.getByRole('main'), 'Other Shop');
    await expectNoAxeViolations(page, '403');
    await shoot(page, 'forbidden');
    const otherEndpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: other.keys.test.secretKey,
      json: { url: receiver.url },
    });
    expect(
      (await page.goto(`${server.baseUrl}/portal/webhooks/${otherEndpoint.body.data.id}`))?.status(),
    ).toBe(403);
    const missing = await page.goto(`${server.baseUrl}/portal/no-such-page`);
    expect(missing?.status()).toBe(404);
    await expectNoAxeViolations(page, '404');
    await context.close();
  });

  it('signs out: the cookie is cleared and the old session id no longer opens a page', async () => {
    const { context, page } = await newPage();
    await signIn(page, shop.keys.test.secretKey);
    const cookie = (await context.cookies()).find((entry) => entry.name === SESSION_COOKIE);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/portal/sign-in?signedOut=1');
    await hasText(page.getByRole('status'), 'signed out');
    await expectNoAxeViolations(page, 'signed out');
    expect((await context.cookies()).find((entry) => entry.name === SESSION_COOKIE)).toBeUndefined();
    const replay = await fetch(`${server.baseUrl}/portal/sessions`, {
      redirect: 'manual',
      headers: { cookie: `${SESSION_COOKIE}=${cookie?.value}` },
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/portal/sign-in');
    await context.close();
  });

  it('sent every page under its CSP with no script error, blocked resource or dialog', () => {
    expect(consoleErrors.filter((text) => !text.includes('status of 40'))).toEqual([]);
  });
});
