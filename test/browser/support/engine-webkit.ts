import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import {
  ENGINE_PACKAGES,
  type Engine,
  type EnginePage,
  type EngineScope,
  requireBinary,
  type Selector,
} from './engine.ts';
import { screenshotPath, until } from './engine-checks.ts';
import {
  CSP_LISTENER_SOURCE,
  describeSelector,
  findExpression,
  PROBLEM_RECORDER_SOURCE,
  scopeOf,
} from './engine-scripts.ts';
import { type ElementReference, WebDriverSession } from './webdriver-http.ts';

/**
 * MiniBrowser's window cannot be narrower than its toolbar (447 device pixels), wider than a phone. GTK's
 * `GDK_DPI_SCALE=2` draws each CSS pixel on two device pixels (as a phone's screen does), so a 780-pixel window
 * is a 390 px viewport and a 640-pixel window a 320 px one.
 */
const SCALE = 2;

/** MiniBrowser's path, as `dpkg -L libwebkit2gtk-4.1-0 | grep MiniBrowser` names it. */
function miniBrowserPath(): string {
  const fallback = ENGINE_PACKAGES.webkit.find((need) => need.binary.endsWith('/MiniBrowser'));
  try {
    const files = execFileSync('dpkg', ['-L', 'libwebkit2gtk-4.1-0'], { encoding: 'utf8' });
    return files.split('\n').find((file) => file.endsWith('/MiniBrowser')) ?? (fallback?.binary as string);
  } catch {
    return fallback?.binary as string;
  }
}

/**
 * The driver's environment: the 2x scale, and no locale (`LANG=C.UTF-8`, a Debian machine's default, and nothing
 * in LC_* or LANGUAGE), whatever the machine has, so WebKit always shows the case issue 36 names: a browser that
 * reports `navigator.language` "C", where the widget must choose the amount's locale itself. (A bare `LANG=C`
 * makes WebKitGTK report "en-US" instead.)
 */
function webkitEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GDK_DPI_SCALE: String(SCALE), LANG: 'C.UTF-8' };
  for (const name of Object.keys(env)) if (name.startsWith('LC_') || name === 'LANGUAGE') delete env[name];
  return env;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * WebKit: WebKitGTK's MiniBrowser through Debian's `WebKitWebDriver` on a free port, under `xvfb-run -a`
 * (MiniBrowser is a GTK program and needs a display), then plain W3C WebDriver over HTTP. Each page is a
 * WebDriver session of its own (a fresh MiniBrowser: cold cache, its own storage); the driver and the display
 * are shared by the file. WebDriver classic has no console events and no script that runs before the page's:
 * a recorder of console errors, uncaught errors and CSP violations is installed in each document the test
 * enters, at each step, so what happens while the test looks is caught; what a document did while it loaded,
 * before the first look, is not (MiniBrowser ignores its console-to-stdout setting in automation mode).
 */
export async function launchWebKitEngine(): Promise<Engine> {
  for (const need of ENGINE_PACKAGES.webkit.filter((need) => !need.binary.endsWith('/MiniBrowser'))) {
    requireBinary('webkit', need.binary, need.debianPackage);
  }
  const miniBrowser = miniBrowserPath();
  requireBinary('webkit', miniBrowser, 'libwebkit2gtk-4.1-0');

  let driver = await startDriver();

  // WebKitWebDriver holds one session at a time: a page a failed test left open is closed by the next.
  let current: EnginePage | undefined;
  return {
    name: 'webkit',
    async open({ width = 390, height = 844 } = {}) {
      await current?.close().catch(() => undefined);
      const capabilities = {
        browserName: 'MiniBrowser',
        'webkitgtk:browserOptions': { binary: miniBrowser, args: ['--automation'] },
      };
      let session: WebDriverSession;
      try {
        session = await WebDriverSession.create(driver.base, capabilities);
      } catch (error) {
        // Once in a full CI run a new session got no answer (a MiniBrowser that never came up): the driver, its
        // display and whatever browser it held are started afresh, once; a second failure fails the test.
        if (!(error instanceof Error && error.message.includes('no answer'))) throw error;
        driver.stop();
        driver = await startDriver();
        session = await WebDriverSession.create(driver.base, capabilities);
      }
      await session.setTimeouts({ pageLoad: 30_000, script: 30_000 });
      const page = webkitPage(session);
      current = page;
      await page.resize(width, height);
      return page;
    },
    async close() {
      driver.stop();
    },
  };
}

/** `WebKitWebDriver` on a free port under its own `xvfb-run -a`, answering `/status`; `stop` ends the group. */
async function startDriver(): Promise<{ base: string; stop: () => void }> {
  const port = await freePort();
  const driver: ChildProcess = spawn(
    'xvfb-run',
    ['-a', '-s', '-screen 0 1600x2000x24', 'WebKitWebDriver', `--port=${port}`, '--host=127.0.0.1'],
    { detached: true, stdio: 'ignore', env: webkitEnvironment() },
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = () => {
    // The whole group: xvfb-run, Xvfb, the driver and any MiniBrowser still open.
    if (driver.pid && driver.exitCode === null) {
      try {
        process.kill(-driver.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  };
  try {
    await until(
      'WebKitWebDriver to answer /status',
      async () => {
        if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited (${driver.exitCode})`);
        const status = await fetch(`${base}/status`);
        return status.ok ? true : undefined;
      },
      20_000,
    );
  } catch (error) {
    stop();
    throw error;
  }
  return { base, stop };
}

/** Installs the recorders in the current document and takes what they recorded since the last look. */
const HARVEST = `(function () {
  ${CSP_LISTENER_SOURCE};
  ${PROBLEM_RECORDER_SOURCE};
  return window.__engineProblems.splice(0);
})()`;

type Offset = { x: number; y: number };

function webkitPage(session: WebDriverSession): EnginePage {
  const problems: string[] = [];
  const frames = new Set<string>();
  const harvest = async () => {
    problems.push(...(await session.execute<string[]>(HARVEST)));
  };
  const top = async (): Promise<Offset> => {
    await session.switchToFrame(null);
    await harvest();
    return { x: 0, y: 0 };
  };
  return {
    engine: 'webkit',
    main: webkitScope(session, top),
    frame(iframe) {
      return webkitScope(session, async () => {
        await session.switchToFrame(null);
        // The frame sits in a shadow root: found by script (through shadowRoot), then switched to as an element.
        // One round trip takes the top document's records, the iframe and where it sits.
        const found = await until(`${iframe} to appear`, async () => {
          const answer = await session.execute<
            { records: string[]; frame: ElementReference | null } & Offset
          >(
            `(function (records, f) {
              if (!f) return { records: records, frame: null, x: 0, y: 0 };
              var r = f.getBoundingClientRect();
              return { records: records, frame: f, x: r.left + f.clientLeft, y: r.top + f.clientTop };
            })(${HARVEST}, ${findExpression(iframe)})`,
          );
          problems.push(...answer.records);
          return answer.frame ? { frame: answer.frame, x: answer.x, y: answer.y } : undefined;
        });
        await session.switchToFrame(found.frame);
        frames.add(iframe);
        await harvest();
        return { x: found.x, y: found.y };
      });
    },
    async problems() {
      await top();
      for (const iframe of frames) {
        const element = await session.execute<ElementReference | null>(findExpression(iframe));
        if (!element) continue; // Gone (the overlay closed): what it recorded was taken at the last look.
        await session.switchToFrame(element);
        await harvest();
        await session.switchToFrame(null);
      }
      return [...problems];
    },
    async goto(url) {
      await top();
      await session.navigate(url);
      await harvest();
    },
    url: () => session.currentUrl(),
    async resize(width, height) {
      await top();
      const chrome = await session.execute<number>(`window.outerHeight - window.innerHeight * ${SCALE}`);
      // The window manager of a fresh display can apply the size after the command has answered (a full CI run
      // once saw 512 px right after asking for 320): the size is asked again until the viewport shows it.
      let seen = 0;
      for (let attempt = 0; attempt < 20; attempt++) {
        await session.setWindowRect(width * SCALE, height * SCALE + Math.max(0, chrome));
        seen = await session.execute<number>('window.innerWidth');
        if (seen === width) return;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error(`webkit: asked for a ${width} px viewport, MiniBrowser shows ${seen} px`);
    },
    async screenshot(name) {
      await top();
      const path = screenshotPath('webkit', name);
      writeFileSync(path, await session.screenshot());
      return path;
    },
    async close() {
      // Leave the page first: deleting a session whose page still holds a push stream open could hang
      // MiniBrowser's close (seen with the checkout's SSE fetch alive).
      await session.switchToFrame(null).catch(() => undefined);
      await session.navigate('about:blank').catch(() => undefined);
      await session.delete();
    },
  };
}

/** The element `selector` names in the current document, waiting for it to appear. */
function elementIn(session: WebDriverSession, selector: Selector) {
  return until(
    `${describeSelector(selector)} to appear`,
    async () => (await session.execute<ElementReference | null>(findExpression(selector))) ?? undefined,
  );
}

/**
 * A document of the page; `enter` switches the session into it and answers where its viewport sits in the
 * top-level one (a cross-origin frame cannot see its own frame element).
 */
function webkitScope(session: WebDriverSession, enter: () => Promise<Offset>): EngineScope {
  return scopeOf({
    async run<R>(expression: string) {
      await enter();
      return session.execute<R>(expression);
    },
    async click(selector) {
      const offset = await enter();
      await elementIn(session, selector);
      // WebKitGTK's automation scales an element-relative pointer by the DPI scale once too often (a click
      // aimed at a button's centre lands at half its coordinates): aim at the centre in device pixels instead.
      const centre = await session.execute<{ x: number; y: number }>(
        `(function (e) {
          e.scrollIntoView({ block: 'center' });
          var r = e.getBoundingClientRect();
          return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
        })(${findExpression(selector)})`,
      );
      await session.clickAt((offset.x + centre.x) * SCALE, (offset.y + centre.y) * SCALE);
    },
    async type(selector, text) {
      await enter();
      await session.sendKeys(await elementIn(session, selector), text);
    },
  });
}
