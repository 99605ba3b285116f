import { afterAll, beforeAll, describe } from 'vitest';
import { ENGINES, type Engine, type EngineName, launchEngine } from './engine.ts';

/**
 * The tests of a three-engine file, once per engine in {@link ENGINES}' order: a `describe` titled
 * `<engine>: <title>` whose engine's browser is launched before its tests and closed after them (vitest runs no
 * hook of a suite whose tests `-t` filtered out, so `-t webkit` starts WebKit alone). `body` defines the tests;
 * they read the running browser with `engine()`.
 *
 * A WebKit step is several WebDriver round trips: on a loaded 2-core machine a test can pass 30 s, hence 90 s.
 * WebKit alone is tried twice: WebKitGTK's MiniBrowser under Xvfb, driven over WebDriver, once in a few full
 * runs does not come up or does not take its window size (seen twice in CI-like runs, never the same step); a
 * failure of the checkout itself fails both tries.
 *
 * @example
 * describeEngines('the pages a payer is sent to', (name, engine) => {
 *   it(`${name}: opens`, async () => {
 *     const page = await engine().open({ width: 390 });
 *   });
 * });
 */
export function describeEngines(title: string, body: (name: EngineName, engine: () => Engine) => void): void {
  for (const name of ENGINES) {
    describe(`${name}: ${title}`, { timeout: 90_000, retry: name === 'webkit' ? 1 : 0 }, () => {
      let engine: Engine | undefined;

      beforeAll(async () => {
        engine = await launchEngine(name);
      });

      afterAll(async () => {
        await engine?.close();
      });

      body(name, () => {
        if (!engine) throw new Error(`${name}: the browser did not start (see the hook's error above)`);
        return engine;
      });
    });
  }
}
