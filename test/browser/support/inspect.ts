import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Frame, Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SCREENSHOTS = fileURLToPath(new URL('../screenshots/', import.meta.url));

/** The checkout frame as a Playwright Frame (for evaluate and axe), once it has loaded. */
export async function checkoutFrameHandle(page: Page): Promise<Frame> {
  const element = await page.waitForSelector('servicepay-checkout iframe');
  const frame = await element.contentFrame();
  if (!frame) throw new Error('the checkout iframe has no frame');
  return frame;
}

/**
 * axe-core's violations (WCAG 2.x A/AA and best practices) in one document: a page or a frame, each checked on
 * its own (axe's cross-frame messaging would only post into a frame). Injected through the DevTools protocol,
 * which the pages' CSPs do not govern.
 */
export async function documentAxeViolations(target: Page | Frame): Promise<string[]> {
  await target.evaluate(AXE_SOURCE);
  return target.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<unknown> } }
    ).axe;
    const result = (await axe.run(document, { resultTypes: ['violations'], iframes: false })) as {
      violations: Array<{ id: string; nodes: Array<{ target: unknown }> }>;
    };
    return result.violations.map(
      (violation) => `${violation.id} ${JSON.stringify(violation.nodes.map((n) => n.target))}`,
    );
  });
}

/** axe-core's violations in the checkout frame and in the overlay on the merchant page. */
export async function axeViolations(page: Page): Promise<string[]> {
  const results: string[] = [];
  const frame = await checkoutFrameHandle(page);
  for (const [where, target] of [
    ['frame', frame],
    ['page', page.mainFrame()],
  ] as const) {
    const violations = await documentAxeViolations(target);
    results.push(...violations.map((violation) => `${where}: ${violation}`));
  }
  return results;
}

/** A screenshot of the page (overlay and frame) for a person to look at, in test/browser/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, animations: 'disabled' });
}

/** What the overlay left on the merchant page: elements, iframes and inline styles on html/body. */
export function leftovers(page: Page) {
  return page.evaluate(() => ({
    checkouts: document.querySelectorAll('servicepay-checkout').length,
    iframes: document.querySelectorAll('iframe').length,
    bodyStyle: document.body.getAttribute('style'),
    rootStyle: document.documentElement.getAttribute('style'),
    focused: document.activeElement?.id ?? document.activeElement?.tagName ?? null,
  }));
}

/** CSP violations the merchant page's own listener recorded. */
export function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
}
