import { accessSync, constants } from 'node:fs';

/**
 * The three browser engines payers use, driven the same way: Chromium (Blink) through playwright-core, Firefox
 * (Gecko) through puppeteer-core over WebDriver BiDi, and WebKitGTK's MiniBrowser through W3C WebDriver.
 * A test is written once against {@link Engine} and {@link EnginePage} and runs in each.
 *
 * @example
 * const engine = await launchEngine('firefox');
 * const page = await engine.open({ width: 390 });
 * await page.goto(url);
 * await page.main.click({ css: 'button', text: 'Pay' });
 */
export type EngineName = 'chromium' | 'firefox' | 'webkit';

/** The engines in the order the tests run them (one alone: `vitest run <file> -t webkit`). */
export const ENGINES: readonly EngineName[] = ['chromium', 'firefox', 'webkit'];

/**
 * An element, found in the document and in every open shadow root under it (the widget's screens live in
 * shadow roots): the first match of `css` whose text or `aria-label` contains `text`, when given.
 * `host >>> inner` finds `inner` inside the shadow root of `host` (a descendant combinator never crosses one),
 * e.g. `servicepay-checkout >>> iframe`.
 */
export type Selector = string | { css: string; text?: string };

/** One document (the page or a frame in it): script, clicks and typing. */
export interface EngineScope {
  /**
   * Evaluates a JavaScript expression (sent as text) in the document and answers its JSON value, awaiting a
   * promise. Script sent by the driver is not governed by the page's CSP in any of the three engines (but an
   * `eval` inside it would be: build the whole expression here instead).
   */
  run<R>(expression: string): Promise<R>;
  /**
   * Runs `fn` in the document with JSON arguments: `fn` is sent as its source, so it may use only its
   * arguments and the page's globals.
   */
  evaluate<R, A extends unknown[]>(fn: (...args: A) => R | Promise<R>, ...args: A): Promise<R>;
  /** A real click (the driver's pointer, after scrolling the element into view); waits for the element. */
  click(selector: Selector): Promise<void>;
  /** Focuses the element and types `text` into it with the driver's keyboard; waits for the element. */
  type(selector: Selector, text: string): Promise<void>;
}

/** A tab in an engine: the main document, its frames, navigation, what went wrong, and its picture. */
export interface EnginePage {
  readonly engine: EngineName;
  /** The top-level document. */
  readonly main: EngineScope;
  /**
   * The document inside the first iframe matching `iframe` (CSS, searched through open shadow roots, as the
   * widget's frame sits in `<servicepay-checkout>`'s), found anew at each call so it survives re-renders.
   */
  frame(iframe: string): EngineScope;
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>;
  /** The top-level document's current URL. */
  url(): Promise<string>;
  /**
   * Console errors and warnings and uncaught exceptions of the page and its frames. Chromium and Firefox report
   * them from the first byte; WebKit's WebDriver has no console events, so there a recorder is installed in each
   * document when the test first enters it (see engine-webkit.ts).
   */
  problems(): Promise<string[]>;
  /** Resizes the viewport (CSS pixels), as a phone's width. */
  resize(width: number, height: number): Promise<void>;
  /** A PNG of the viewport, written to test/browser/screenshots/engines/<engine>-<name>.png; answers the path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** One running browser of an engine; each {@link EnginePage} is a fresh page (Chromium: a fresh context). */
export interface Engine {
  readonly name: EngineName;
  open(options?: { width?: number; height?: number }): Promise<EnginePage>;
  close(): Promise<void>;
}

/** What each engine needs from Debian, for the one-line failure when it is missing. */
export const ENGINE_PACKAGES: Record<EngineName, Array<{ binary: string; debianPackage: string }>> = {
  chromium: [{ binary: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', debianPackage: 'chromium' }],
  firefox: [{ binary: '/usr/bin/firefox-esr', debianPackage: 'firefox-esr' }],
  webkit: [
    { binary: '/usr/bin/WebKitWebDriver', debianPackage: 'webkit2gtk-driver' },
    { binary: '/usr/bin/xvfb-run', debianPackage: 'xvfb' },
    // xvfb-run needs xauth, which xvfb only recommends (an install without recommends lacks it).
    { binary: '/usr/bin/xauth', debianPackage: 'xauth' },
    {
      binary: '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser',
      debianPackage: 'libwebkit2gtk-4.1-0',
    },
  ],
};

/**
 * Throws one line naming the Debian package to install when a binary an engine needs is missing; a missing
 * browser fails the test (never a skip: a payer's browser that is not tested is a browser that may not pay).
 */
export function requireBinary(engine: EngineName, binary: string, debianPackage: string): void {
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    throw new Error(
      `${engine}: ${binary} is missing; install the Debian package ${debianPackage} (apt-get install -y ${debianPackage}).`,
    );
  }
}

/** Launches one engine's browser (Debian's, never a download); fails in one line when it is not installed. */
export async function launchEngine(name: EngineName): Promise<Engine> {
  switch (name) {
    case 'chromium':
      return (await import('./engine-chromium.ts')).launchChromiumEngine();
    case 'firefox':
      return (await import('./engine-firefox.ts')).launchFirefoxEngine();
    case 'webkit':
      return (await import('./engine-webkit.ts')).launchWebKitEngine();
  }
}
