import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EngineName, EnginePage, EngineScope, Selector } from './engine.ts';
import {
  AXE_LOAD_EXPRESSION,
  CSP_LISTENER_SOURCE,
  describeSelector,
  findExpression,
} from './engine-scripts.ts';

// What the cross-engine tests check, written once over EngineScope's evaluate: the same script reads the same
// thing in Blink, Gecko and WebKit.

const SCREENSHOTS = fileURLToPath(new URL('../screenshots/engines/', import.meta.url));

/** Where an engine's screenshot `name` goes (test/browser/screenshots/engines/<engine>-<name>.png). */
export function screenshotPath(engine: EngineName, name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return `${SCREENSHOTS}${engine}-${name}.png`;
}

/** A console message as playwright-core's and puppeteer-core's `ConsoleMessage` both read. */
interface ConsoleLine {
  type(): string;
  text(): string;
  location(): { url?: string | undefined };
}

/**
 * What goes wrong in a page and its frames, as Chromium and Firefox report it from the first byte: console
 * errors and warnings (playwright-core types a warning `warning`, puppeteer-core `warn`), and uncaught exceptions
 * (where Gecko also reports a CSP refusal). The engine hands `console` and `pageError` to its page's events and
 * `lines` to `EnginePage.problems`.
 *
 * @example
 * const recorder = problemRecorder();
 * page.on('console', recorder.console);
 * page.on('pageerror', recorder.pageError);
 */
export function problemRecorder(): {
  lines: () => string[];
  console: (message: ConsoleLine) => void;
  pageError: (error: unknown) => void;
} {
  const problems: string[] = [];
  return {
    lines: () => [...problems],
    console(message) {
      const type = message.type();
      if (type === 'error' || type === 'warning' || type === 'warn') {
        problems.push(`${type}: ${message.text()} (${message.location().url ?? ''})`);
      }
    },
    pageError(error) {
      problems.push(`pageerror: ${error instanceof Error ? error.message : String(error)}`);
    },
  };
}

/**
 * Retries `attempt` every 100 ms until it answers something other than undefined (an error counts as "not
 * yet": a frame still loading, a re-render); after `timeout` ms fails saying what it waited for and the last error.
 */
export async function until<T>(
  waitingFor: string,
  attempt: () => Promise<T | undefined>,
  timeout = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const reason = last instanceof Error ? `: ${last.message.split('\n')[0]}` : '';
      throw new Error(`timed out after ${timeout} ms waiting for ${waitingFor}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The element's trimmed text (its shadow root's when it has one), or null when it is not there. */
export function readText(scope: EngineScope, selector: Selector): Promise<string | null> {
  return scope.run(`(function (element) {
    if (!element) return null;
    return ((element.shadowRoot || element).textContent || '').replace(/\\s+/g, ' ').trim();
  })(${findExpression(selector)})`);
}

/** Waits until `selector`'s text contains `text`; answers the whole text. */
export function waitForText(
  scope: EngineScope,
  selector: Selector,
  text: string,
  timeout = 10_000,
): Promise<string> {
  let seen: string | null = null;
  return until(
    `"${text}" in ${describeSelector(selector)}`,
    async () => {
      seen = await readText(scope, selector);
      return seen?.includes(text) ? seen : undefined;
    },
    timeout,
  ).catch((error: Error) => {
    throw new Error(`${error.message} (it read ${JSON.stringify(seen)})`);
  });
}

/** Waits until `selector` is in no document of the scope any more. */
export function waitForGone(scope: EngineScope, selector: Selector, timeout = 10_000): Promise<true> {
  return until(
    `${describeSelector(selector)} to go`,
    async () => ((await scope.run(`${findExpression(selector)} === null`)) ? true : undefined),
    timeout,
  );
}

/** How far the document scrolls sideways (0 when it does not): scrollWidth - clientWidth of the root. */
export function sidewaysScroll(scope: EngineScope): Promise<number> {
  return scope.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** The viewport's width in CSS pixels as the document sees it. */
export function viewportWidth(scope: EngineScope): Promise<number> {
  return scope.evaluate(() => window.innerWidth);
}

/**
 * axe-core's violations (WCAG 2.x A/AA and best practices) in the scope's document alone (each frame is
 * checked on its own, axe's cross-frame messaging being a page script of its own).
 */
export async function axeViolations(scope: EngineScope): Promise<string[]> {
  // axe's 500 kB are sent only to a document that does not have it yet (the frame keeps it across screens).
  const present = (await scope.run<string>('typeof window.axe')) === 'object';
  const loaded = present ? 'object' : await scope.run<string>(AXE_LOAD_EXPRESSION);
  if (loaded !== 'object') throw new Error(`axe-core did not load (typeof axe: ${loaded})`);
  return scope.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<unknown> } }
    ).axe;
    const result = (await axe.run(document, { resultTypes: ['violations'], iframes: false })) as {
      violations: Array<{ id: string; nodes: Array<{ target: unknown }> }>;
    };
    return result.violations.map(
      (violation) => `${violation.id} ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
    );
  });
}

/**
 * The CSP violations the document saw (`securitypolicyviolation` events, recorded by the engine's listener and,
 * on a merchant page, by the merchant's own script too).
 */
export async function cspViolations(scope: EngineScope): Promise<string[]> {
  // WebKit's driver cannot install the listener before the page's scripts run: there it starts now.
  await scope.run(CSP_LISTENER_SOURCE);
  return scope.evaluate(() => {
    const global = window as unknown as { __engineCspViolations?: string[]; cspViolations?: string[] };
    return [...(global.__engineCspViolations ?? []), ...(global.cspViolations ?? [])];
  });
}

/** The account number the checkout frame shows on AWAITING_PAYMENT (ten digits), once it does. */
export function shownAccountNumber(frame: EngineScope): Promise<string> {
  return until(
    'an account number',
    async () => {
      const digits = await readText(frame, '.digits');
      return digits && /^\d{10}$/.test(digits) ? digits : undefined;
    },
    15_000,
  );
}

/** The CSP violations of the page's top document and, when given, of its checkout frame, in one list. */
export async function pageCspViolations(page: EnginePage, frame?: EngineScope): Promise<string[]> {
  return [...(await cspViolations(page.main)), ...(frame ? await cspViolations(frame) : [])];
}
