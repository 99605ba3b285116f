import type { ElementHandle, Frame, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import {
  ENGINE_PACKAGES,
  type Engine,
  type EnginePage,
  type EngineScope,
  requireBinary,
  type Selector,
} from './engine.ts';
import { problemRecorder, screenshotPath, until } from './engine-checks.ts';
import { CSP_LISTENER_SOURCE, describeSelector, findExpression, scopeOf } from './engine-scripts.ts';

/** Chromium (Blink): Debian's `chromium` through playwright-core, as the other browser suites launch it. */
export async function launchChromiumEngine(): Promise<Engine> {
  for (const need of ENGINE_PACKAGES.chromium) requireBinary('chromium', need.binary, need.debianPackage);
  const browser = await launchChromium();
  return {
    name: 'chromium',
    async open({ width = 390, height = 844 } = {}) {
      // A fresh context per page: a cold cache and its own storage, as a payer's first visit.
      const context = await browser.newContext({ viewport: { width, height } });
      await context.addInitScript({ content: CSP_LISTENER_SOURCE });
      const page = await context.newPage();
      const problems = problemRecorder();
      page.on('console', problems.console);
      page.on('pageerror', problems.pageError);
      return chromiumPage(page, problems.lines, () => context.close());
    },
    close: () => browser.close(),
  };
}

function chromiumPage(page: Page, problems: () => string[], close: () => Promise<void>): EnginePage {
  const main = chromiumScope(async () => page.mainFrame());
  return {
    engine: 'chromium',
    main,
    problems: async () => problems(),
    frame(iframe) {
      return chromiumScope(async () => {
        const element = await elementIn(page.mainFrame(), iframe);
        const frame = await element.contentFrame();
        if (!frame) throw new Error(`${iframe} has no document`);
        return frame;
      });
    },
    async goto(url) {
      await page.goto(url, { waitUntil: 'load' });
    },
    async url() {
      return page.url();
    },
    async resize(width, height) {
      await page.setViewportSize({ width, height });
    },
    async screenshot(name) {
      const path = screenshotPath('chromium', name);
      await page.screenshot({ path, animations: 'disabled' });
      return path;
    },
    close,
  };
}

/** The element `selector` names in `frame`, waiting for it to appear. */
function elementIn(frame: Frame, selector: Selector): Promise<ElementHandle<Node>> {
  return until<ElementHandle<Node>>(`${describeSelector(selector)} to appear`, async () => {
    const handle = await frame.evaluateHandle(findExpression(selector));
    return (handle.asElement() as ElementHandle<Node> | null) ?? undefined;
  });
}

function chromiumScope(document: () => Promise<Frame>): EngineScope {
  return scopeOf({
    async run<R>(expression: string) {
      return (await (await document()).evaluate(expression)) as R;
    },
    async click(selector) {
      await (await elementIn(await document(), selector)).click();
    },
    async type(selector, text) {
      const frame = await document();
      const element = await elementIn(frame, selector);
      await element.focus();
      await frame.page().keyboard.type(text);
    },
  });
}
