import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from './support/browser.ts';
import {
  type CheckoutWorld,
  checkoutFrame,
  heading,
  shownAccountNumber,
  startCheckoutWorld,
} from './support/checkout-world.ts';

// The two examples of widget/README.md, run as a new user would paste them: the plain page and its pay.js, and
// the React page under StrictMode, each against the real service, under the spec's CSP. The README is written
// for the default ports; the test's service listens on free ones, and that is all it rewrites.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(`${ROOT}widget/README.md`, 'utf8');

/** The first ```language block after the heading `## section`. */
function snippet(section: string, language: string): string {
  const after = README.slice(README.indexOf(`\n## ${section}\n`));
  const block = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(after)?.[1];
  if (!block) throw new Error(`widget/README.md has no ${language} block under "${section}"`);
  return block;
}

let browser: Browser;
let world: CheckoutWorld;

beforeAll(async () => {
  [browser, world] = await Promise.all([launchChromium(), startCheckoutWorld()]);
});

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

const onTheTestPorts = (code: string) =>
  code
    .replaceAll('http://127.0.0.1:4243', world.server.widgetUrls.test)
    .replaceAll('http://127.0.0.1:4242', world.server.baseUrl);

/** The merchant backend of both snippets: `POST /checkout` answers the next session's client secret. */
async function nextCheckout(amount: number) {
  const session = await world.createSession(amount);
  world.site.file('/checkout', 'application/json', JSON.stringify({ clientSecret: session.clientSecret }));
  return session;
}

describe("widget/README.md's examples", () => {
  it('are each under twenty lines', () => {
    const lines = (code: string) => code.trimEnd().split('\n').length;
    expect(lines(snippet('A plain page', 'html')) + lines(snippet('A plain page', 'js'))).toBeLessThan(20);
    expect(lines(snippet('React', 'tsx'))).toBeLessThan(20);
  });

  it('the plain page with one script tag and pay.js pays a test session end to end', async () => {
    const { page, context, problems } = await openPage(browser);
    const host = world.server.widgetUrls.test;
    const shop = world.site.page('/readme-plain.html', onTheTestPorts(snippet('A plain page', 'html')), host);
    world.site.file('/pay.js', 'text/javascript; charset=utf-8', snippet('A plain page', 'js'));
    world.site.page(
      '/thanks',
      '<!doctype html><html lang="en"><title>Thanks</title><p>Thank you</p></html>',
      host,
    );
    const session = await nextCheckout(250_000);
    await page.goto(shop);
    await page.getByRole('button', { name: 'Pay' }).click();
    await world.transfer(await shownAccountNumber(page), 250_000);
    await page.waitForURL(`**/thanks?ref=${session.reference}`);
    expect(await world.sessionStatus(session.id)).toBe('successful');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the React page under StrictMode: a cancel closes the overlay, Pay again opens a new session that pays', async () => {
    // The snippet's mode="TEST" means the test host on its default port; this one listens elsewhere, so
    // '@servicepay/react' resolves to the package's source with `widgetHost` set to it, and nothing else changed.
    const widgetHost: Plugin = {
      name: 'widget-host-on-a-free-port',
      setup(context) {
        context.onResolve({ filter: /^@servicepay\/react$/ }, () => ({
          path: 'react',
          namespace: 'servicepay',
        }));
        context.onLoad({ filter: /.*/, namespace: 'servicepay' }, () => ({
          resolveDir: ROOT,
          loader: 'js',
          contents: `import { createElement } from 'react';
import { PaymentWidget as Widget } from './widget/react/src/index.ts';
const host = document.querySelector('meta[name="widget-host"]').content;
export const PaymentWidget = (props) => createElement(Widget, { ...props, widgetHost: host });`,
        }));
      },
    };
    const bundle = await build({
      stdin: { contents: snippet('React', 'tsx'), loader: 'tsx', resolveDir: ROOT, sourcefile: 'app.tsx' },
      bundle: true,
      format: 'iife',
      jsx: 'automatic',
      write: false,
      define: { 'process.env.NODE_ENV': '"development"' },
      logLevel: 'silent',
      plugins: [widgetHost],
    });
    const host = world.server.widgetUrls.test;
    world.site.file('/app.js', 'text/javascript; charset=utf-8', bundle.outputFiles[0]?.text ?? '');
    world.site.page(
      '/thanks',
      '<!doctype html><html lang="en"><title>Thanks</title><p>Thank you</p></html>',
      host,
    );
    const shop = world.site.page(
      '/readme-react.html',
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>React shop</title>
<meta name="widget-host" content="${host}"><script src="/app.js" defer></script></head>
<body><div id="root"></div></body></html>`,
      host,
    );
    const { page, context, problems } = await openPage(browser);
    await page.goto(shop);

    const cancelled = await nextCheckout(250_000);
    await page.getByRole('button', { name: 'Pay' }).click();
    await shownAccountNumber(page);
    await page.keyboard.press('Escape');
    await checkoutFrame(page).getByRole('button', { name: 'Cancel payment' }).click();
    // onCancel unmounts the widget, which closes the overlay: the Pay button is back.
    await page.waitForSelector('servicepay-checkout', { state: 'detached' });
    expect(await world.sessionStatus(cancelled.id)).toBe('cancelled');

    const paid = await nextCheckout(300_000);
    await page.getByRole('button', { name: 'Pay' }).click();
    await heading(page).filter({ hasText: '₦3,000.00' }).waitFor();
    await world.transfer(await shownAccountNumber(page), 300_000);
    await page.waitForURL(`**/thanks?ref=${paid.reference}`);
    expect(await world.sessionStatus(paid.id)).toBe('successful');
    expect(problems).toEqual([]);
    await context.close();
  });
});
