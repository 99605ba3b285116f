import { type Browser, type BrowserContext, type ConsoleMessage, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, headless, as the rules of this repository launch it (no browser download). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
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
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and warnings from the page and every frame in it (CSP violations show up here too). */
  problems: string[];
  close(): Promise<void>;
}

/**
 * A fresh context (cold cache, its own storage) and page at a phone's width, with every console error,
 * warning and uncaught exception of the page and its frames collected for the test to assert on.
 */
export async function openPage(
  browser: Browser,
  options: { width?: number; height?: number; colorScheme?: 'light' | 'dark'; reducedMotion?: 'reduce' } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 390, height: options.height ?? 844 },
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: options.reducedMotion ?? 'no-preference',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`${message.type()}: ${message.text()} (${message.location().url})`);
    }
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return {
    page,
    context,
    problems,
    close: () => context.close(),
  };
}
