import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';

/**
 * How long one browser step may take here. The Blocks checkout is a large React bundle served by PHP's built-in
 * server; while the rest of `npm test` loads both cores it has taken more than Playwright's default 30 s to
 * render, so a step waits longer, and a failure says what the page was doing (see `inPage`).
 */
const STEP_TIMEOUT_MS = 90_000;

/**
 * Runs `use` with a fresh page in a context of its own (holding `cookies`) and closes both after. When `use` throws, the error is rethrown with what the
 * page did: its URL, console errors, uncaught errors, failed and 4xx/5xx requests, and a screenshot's path,
 * so that a failure seen only in CI can be read from CI's log.
 *
 * @example
 * await inPage(browser, async (page) => {
 *   await page.goto(`${woo.url}/checkout/`);
 * });
 */
export async function inPage<T>(
  browser: Browser,
  use: (page: Page) => Promise<T>,
  cookies: Array<{ name: string; value: string; url: string }> = [],
): Promise<T> {
  // A context of its own: the page's cookies (its cart) start empty, or as given.
  const context = await browser.newContext();
  await context.addCookies(cookies);
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
  const seen: string[] = [];
  const started = Date.now();
  const at = () => `+${((Date.now() - started) / 1000).toFixed(1)}s`;
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      seen.push(`${at()} console.${message.type()}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => seen.push(`${at()} uncaught: ${error.message}`));
  page.on('requestfailed', (request) =>
    seen.push(`${at()} failed: ${request.method()} ${request.url()} (${request.failure()?.errorText})`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400) seen.push(`${at()} ${response.status()}: ${response.url()}`);
  });
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) seen.push(`${at()} navigated: ${frame.url()}`);
  });
  try {
    return await use(page);
  } catch (error) {
    const folder = join(tmpdir(), 'servicepay-woo-failures');
    mkdirSync(folder, { recursive: true });
    const screenshot = join(folder, `${Date.now()}.png`);
    const saved = await page.screenshot({ path: screenshot, fullPage: true, timeout: 10_000 }).then(
      () => screenshot,
      () => 'none (the page did not answer)',
    );
    const text = await page
      .locator('body')
      .innerText({ timeout: 5_000 })
      .then(
        (body) => body.replace(/\s+/g, ' ').slice(0, 600),
        () => '(unreadable)',
      );
    const what = error instanceof Error ? error : new Error(String(error));
    what.message = [
      what.message,
      `page: ${page.url()} after ${at()}`,
      `page text: ${text}`,
      `screenshot: ${saved}`,
      ...seen.slice(-40),
    ].join('\n');
    throw what;
  } finally {
    await context.close();
  }
}
