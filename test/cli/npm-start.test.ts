import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, createSession } from '../support/api.ts';
import { type RunningProcess, startProcess } from '../support/child-process.ts';

// `npm start` as the README promises it: the service on its embedded default, the portal, both widget hosts
// and the example shop, one banner with every URL and the development test keys, the same ones on every
// start. Run as the script npm runs, on a temporary folder, on free ports.

const folder = mkdtempSync(join(tmpdir(), 'servicepay-start-'));
const dbPath = join(folder, 'servicepay.db');
const started: RunningProcess[] = [];

afterAll(async () => {
  for (const child of started) await child.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** A port that was free a moment ago. */
async function freePort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as { port: number };
  return { port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
}

function npmStart(env: Record<string, string>): RunningProcess {
  // --no-build: `npm test` has built every package already, and a rebuild here would rewrite dist/ under the
  // suites running beside this one.
  const child = startProcess(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--no-build'], {
    env: {
      SERVICEPAY_DB: dbPath,
      SERVICEPAY_PORT: '0',
      SERVICEPAY_TEST_WIDGET_PORT: '0',
      SERVICEPAY_LIVE_WIDGET_PORT: '0',
      SHOP_PORT: '0',
      ...env,
    },
  });
  started.push(child);
  return child;
}

/** Waits for the banner and reads every URL and key from it. */
async function banner(child: RunningProcess) {
  await child.waitFor(/Press Ctrl\+C to stop/);
  const printed = child.output();
  const field = (label: string, pattern = '(http://\\S+)') => {
    const value = new RegExp(`${label}\\s+${pattern}`).exec(printed)?.[1];
    if (!value) throw new Error(`npm start printed no ${label}:\n${printed}`);
    return value;
  };
  return {
    printed,
    api: field('API'),
    portal: field('Developer portal'),
    testWidget: field('Test widget host'),
    liveWidget: field('Live widget host'),
    shop: field('Example shop'),
    secretKey: field('secret key', '(sk_test_[0-9A-Za-z]{32})'),
    publishableKey: field('publishable key', '(pk_test_[0-9A-Za-z]{32})'),
  };
}

const refused = async (url: string) =>
  fetch(url).then(
    () => false,
    () => true,
  );

describe('npm start', () => {
  it('starts the service and the example shop, prints every URL and a test key that works, and stops on Ctrl-C', async () => {
    const shopPort = await freePort();
    await shopPort.release();
    const first = npmStart({ SHOP_PORT: String(shopPort.port) });
    const seen = await banner(first);
    expect(seen.portal).toBe(`${seen.api}/portal`);
    expect(seen.testWidget).toMatch(/\/latest\/widget\.js$/);
    expect(seen.liveWidget).toMatch(/\/latest\/widget\.js$/);
    expect(seen.shop).toBe(`http://127.0.0.1:${shopPort.port}`);
    expect(seen.printed).toContain('webhooks on the fast schedule');

    const created = await createSession(seen.api, seen.secretKey);
    expect(created).toMatchObject({ status: 'pending', environment: 'test' });

    // The shop runs on the printed test key, with its webhook endpoint registered with the service.
    const page = await call(seen.shop, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<script src="${seen.testWidget}"></script>`);
    const endpoints = await call(seen.api, 'GET', '/api/webhooks', { token: seen.secretKey });
    expect(endpoints.body.data.map((e: { url: string }) => e.url)).toEqual([
      `${seen.shop}/webhooks/servicepay`,
    ]);

    expect(await first.stop('SIGINT')).toBe(0);
    expect(await refused(`${seen.api}/health`)).toBe(true);
    expect(await refused(seen.shop)).toBe(true);

    // The keys file beside the database is the owner's alone: it holds the development business's keys.
    expect(statSync(join(folder, 'development-keys.json')).mode & 0o077).toBe(0);

    // A second start: the same database, the same keys, the same single webhook endpoint for the shop.
    const second = npmStart({ SHOP_PORT: String(shopPort.port) });
    const again = await banner(second);
    expect(again.secretKey).toBe(seen.secretKey);
    expect(again.publishableKey).toBe(seen.publishableKey);
    const listed = await call(again.api, 'GET', `/api/widget/sessions/${created.id}`, {
      token: again.secretKey,
    });
    expect(listed.status).toBe(200);
    expect(second.output()).toMatch(/webhook endpoint we_\w+ reused/);
    const endpointsAgain = await call(again.api, 'GET', '/api/webhooks', { token: again.secretKey });
    expect(endpointsAgain.body.data).toHaveLength(1);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it.each([
    ['SERVICEPAY_PORT'],
    ['SERVICEPAY_TEST_WIDGET_PORT'],
    ['SERVICEPAY_LIVE_WIDGET_PORT'],
    ['SHOP_PORT'],
  ])('names %s in one line when its port is taken', async (variable) => {
    const taken = await freePort();
    try {
      const child = npmStart({ [variable]: String(taken.port) });
      expect(await child.exited).toBe(1);
      const lines = child.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Port ${taken.port} is in use`);
      expect(lines[0]).toContain(`set ${variable} to another port`);
    } finally {
      await taken.release();
    }
  });

  it('says in one line why it cannot start, with SERVICEPAY_SECRETS_KEY as servicepay-server takes it', async () => {
    const child = npmStart({ SERVICEPAY_SECRETS_KEY: 'too-short' });
    expect(await child.exited).toBe(1);
    expect(child.output().trim()).toBe(
      'npm start failed: SERVICEPAY_SECRETS_KEY must be 32 bytes, base64-encoded',
    );
  });

  it('refuses an unknown flag or a bad port with its usage, exit 2', async () => {
    const badFlag = startProcess(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--prot', '1']);
    expect(await badFlag.exited).toBe(2);
    expect(badFlag.output()).toContain('npm start [--');
    const badPort = npmStart({ SERVICEPAY_PORT: 'eighty' });
    expect(await badPort.exited).toBe(2);
    expect(badPort.output()).toContain('SERVICEPAY_PORT must be a port number');
  });
});
