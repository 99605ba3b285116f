import puppeteer, { type ElementHandle, type Frame, type Page } from 'puppeteer-core';
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

/**
 * Firefox (Gecko): Debian's `firefox-esr` through puppeteer-core over WebDriver BiDi, headless. puppeteer-core
 * downloads no browser; the profile is a fresh temporary one per launch.
 */
export async function launchFirefoxEngine(): Promise<Engine> {
  for (const need of ENGINE_PACKAGES.firefox) requireBinary('firefox', need.binary, need.debianPackage);
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
    // No update checks, telemetry or remote settings on a test machine (the same quiet Chromium is asked for).
    extraPrefsFirefox: {
      'app.update.enabled': false,
      'browser.shell.checkDefaultBrowser': false,
      'datareporting.policy.dataSubmissionEnabled': false,
      'toolkit.telemetry.enabled': false,
      'network.captive-portal-service.enabled': false,
      'network.connectivity-service.enabled': false,
    },
  });
  return {
    name: 'firefox',
    async open({ width = 390, height = 844 } = {}) {
      // A fresh user context per page: its own cookies, storage and cache, as a payer's first visit.
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.setViewport({ width, height });
      // A BiDi preload script: runs in every frame of the page before the frame's own scripts.
      await page.evaluateOnNewDocument(CSP_LISTENER_SOURCE);
      const problems = problemRecorder();
      page.on('console', problems.console);
      // Gecko reports a CSP refusal as an error of the page, not as a console message.
      page.on('pageerror', problems.pageError);
      return firefoxPage(page, problems.lines, () => context.close());
    },
    close: () => browser.close(),
  };
}

function firefoxPage(page: Page, problems: () => string[], close: () => Promise<void>): EnginePage {
  return {
    engine: 'firefox',
    main: firefoxScope(async () => page.mainFrame()),
    problems: async () => problems(),
    frame(iframe) {
      return firefoxScope(async () => {
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
      await page.setViewport({ width, height });
    },
    async screenshot(name) {
      const path = screenshotPath('firefox', name);
      await page.screenshot({ path: path as `${string}.png` });
      return path;
    },
    close,
  };
}

/** The element `selector` names in `frame`, waiting for it to appear. */
function elementIn(frame: Frame, selector: Selector): Promise<ElementHandle> {
  return until(`${describeSelector(selector)} to appear`, async () => {
    const handle = await frame.evaluateHandle(findExpression(selector));
    return (handle.asElement() as ElementHandle | null) ?? undefined;
  });
}

function firefoxScope(document: () => Promise<Frame>): EngineScope {
  return scopeOf({
    async run<R>(expression: string) {
      return (await (await document()).evaluate(expression)) as R;
    },
    async click(selector) {
      await (await elementIn(await document(), selector)).click();
    },
    async type(selector, text) {
      await (await elementIn(await document(), selector)).type(text);
    },
  });
}
