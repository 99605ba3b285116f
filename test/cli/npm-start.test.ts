import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, createSession } from '../support/api.ts';
import { type RunningProcess, startProcess } from '../support/child-process.ts';
import { openPool } from '../support/open-pool.ts';
import { postgresAvailable, reportIfPostgresMissing, startPostgres } from '../support/postgres.ts';

// `npm start` as the README promises it: the service on its embedded default, the portal, both widget hosts
// and the example shop, one banner with every URL and the development test keys, the same ones on every
// start. Run as the script npm runs, on a temporary folder, on free ports.

reportIfPostgresMissing();

const folder = mkdtempSync(join(tmpdir(), 'servicepay-start-'));
const dbPath = join(folder, 'servicepay.db');
const started: RunningProcess[] = [];
/** Process groups started through npm: npm passes no signal on, so a leftover is ended as a group. */
const groups: number[] = [];

afterAll(async () => {
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone: it stopped as the test asked.
    }
  }
  for (const child of started) await child.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** The one line a clean stop ends with. */
const STOPPED = 'npm start: stopped (everything it started is closed).';

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

/** Whether nothing listens on the port of `url` any more: this process can take it. */
async function portIsFree(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(Number(port), hostname, () => probe.close(() => resolve(true)));
  });
}

/**
 * Stops `npm start` as Ctrl-C (or a `kill`) would and checks that it stopped cleanly: exit 0, no forced-stop
 * line (printed when something did not close in time, with exit 1), and every port it listened on free again.
 */
async function expectCleanStop(child: RunningProcess, seen: { printed: string }, signal: NodeJS.Signals) {
  const code = await child.stop(signal);
  expect(child.output()).not.toContain('still open:');
  expect(code).toBe(0);
  expect(child.output().trimEnd().split('\n').at(-1)).toBe(STOPPED);
  await expectPortsFree(seen.printed);
}

/** Every server the banner lists (the portal is on the API's port) no longer listens. */
async function expectPortsFree(printed: string) {
  const urls = [...printed.matchAll(/^ {2}(?:API|Test widget host|Live widget host|Example shop)\s+(\S+)/gm)];
  expect(urls).toHaveLength(4);
  for (const [, url] of urls) expect(await portIsFree(url as string), url).toBe(true);
}

/**
 * `npm start -- <flags>` through npm itself, as a user types it, in a process group of its own (setsid) as a
 * terminal gives it, on free ports and its own database folder.
 */
function npmStartThroughNpm(flags: string[], databaseFolder: string): RunningProcess {
  const child = startProcess('setsid', ['npm', 'start', '--', '--no-build', ...flags], {
    env: {
      SERVICEPAY_DB: join(folder, databaseFolder, 'servicepay.db'),
      SERVICEPAY_PORT: '0',
      SERVICEPAY_TEST_WIDGET_PORT: '0',
      SERVICEPAY_LIVE_WIDGET_PORT: '0',
      SHOP_PORT: '0',
    },
  });
  groups.push(child.child.pid as number);
  return child;
}

/**
 * Whatever npm started holds the output pipe until it has exited, so the output is complete when both streams
 * have closed; waits at most `limitMs` (a process left running never closes them).
 */
async function outputClosed(child: RunningProcess, limitMs = 10_000): Promise<void> {
  const { stdout, stderr } = child.child;
  const closed = Promise.all(
    [stdout, stderr].map((stream) => (stream && !stream.closed ? once(stream, 'close') : undefined)),
  );
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, limitMs))]);
}

/**
 * Ctrl-C in a terminal: SIGINT to the whole foreground process group (npm, its shell and node). npm exits at
 * once; node goes on stopping.
 */
async function pressCtrlC(child: RunningProcess): Promise<void> {
  process.kill(-(child.child.pid as number), 'SIGINT');
  await child.exited;
  await outputClosed(child);
}

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
    expect(seen.printed).toMatch(/^Development business Paper & Ink \(biz_\w+\), test keys:$/m);

    const created = await createSession(seen.api, seen.secretKey);
    expect(created).toMatchObject({ status: 'pending', environment: 'test' });

    // The shop runs on the printed test key, with its webhook endpoint registered with the service.
    const page = await call(seen.shop, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<script src="${seen.testWidget}"></script>`);
    // One name: the shop's heading is the name its checkout shows the payer.
    expect(page.text).toContain('<h1>Paper &amp; Ink</h1>');
    const order = await call(seen.shop, 'POST', '/api/orders', {
      json: { productId: 'notebook', name: 'Ada Lovelace', email: 'ada@example.com' },
    });
    const checkout = await call(seen.api, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: order.body.clientSecret },
    });
    expect(checkout.body.data.session).toMatchObject({ merchantName: 'Paper & Ink', amount: 500_000 });
    const endpoints = await call(seen.api, 'GET', '/api/webhooks', { token: seen.secretKey });
    expect(endpoints.body.data.map((e: { url: string }) => e.url)).toEqual([
      `${seen.shop}/webhooks/servicepay`,
    ]);

    await expectCleanStop(first, seen, 'SIGINT');

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
    await expectCleanStop(second, again, 'SIGTERM');
  });

  it('takes its settings as flags after `npm start --`, over the variables, and says so in the banner', async () => {
    const api = await freePort();
    await api.release();
    // The variables say "any free port" and the fast schedule; the flags win, as they do for servicepay-server.
    const child = npmStartThroughNpm(['--port', String(api.port), '--webhook-schedule', 'standard'], 'flags');
    const seen = await banner(child);
    expect(seen.api).toBe(`http://127.0.0.1:${api.port}`);
    expect(seen.printed).toContain(
      `ServicePay is running (database ${join(folder, 'flags', 'servicepay.db')}, webhooks on the standard schedule)`,
    );
    expect((await call(seen.api, 'GET', '/health')).status).toBe(200);
    await pressCtrlC(child);
    expect(child.output()).not.toContain('still open:');
    expect(child.output().trimEnd().split('\n').at(-1)).toBe(STOPPED);
    await expectPortsFree(seen.printed);
  });

  it('stops when npm alone is told to (a process manager, `timeout`, `kill <npm pid>`), leaving nothing running', async () => {
    // npm passes SIGTERM to the shell it ran the script in, not to what that shell started: the shell dies, and
    // node must see that its parent is gone, or it lives on holding every port.
    const child = npmStartThroughNpm([], 'npm-alone');
    const seen = await banner(child);
    process.kill(child.child.pid as number, 'SIGTERM');
    await child.exited;
    await outputClosed(child);
    expect(child.output()).not.toContain('still open:');
    await expectPortsFree(seen.printed);
  });

  it.each([
    ['SERVICEPAY_TRUST_PROXY', '*'],
    ['SERVICEPAY_DATABASE_URL', 'mysql://app@127.0.0.1/pay'],
  ])('refuses a %s that servicepay-server refuses (%s), instead of ignoring it', async (variable, value) => {
    const child = npmStart({ [variable]: value });
    expect(await child.exited).toBe(2);
    expect(child.output().split('\n')[0]).toContain(variable);
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

  it('refuses two port variables that ask for one port, naming both, before it opens anything', async () => {
    const child = npmStart({ SERVICEPAY_PORT: '47123', SHOP_PORT: '47123' });
    expect(await child.exited).toBe(2);
    expect(child.output().split('\n')[0]).toBe(
      'SERVICEPAY_PORT and SHOP_PORT both ask for port 47123: give each its own',
    );
  });

  it('refuses a header timeout longer than its request timeout, as servicepay-server start does, before it opens anything', async () => {
    const child = npmStart({ SERVICEPAY_HEADERS_TIMEOUT_MS: '40000' });
    expect(await child.exited).toBe(2);
    expect(child.output().split('\n')[0]).toBe(
      'SERVICEPAY_HEADERS_TIMEOUT_MS (40000 ms) is longer than the default of --request-timeout-ms or ' +
        "SERVICEPAY_REQUEST_TIMEOUT_MS (30000 ms): a request's headers arrive within the request, so the header " +
        'timeout must be at most the request timeout',
    );
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

describe.runIf(postgresAvailable)('npm start on PostgreSQL', () => {
  it('keeps its data where SERVICEPAY_DATABASE_URL says, as servicepay-server start does, and names it without the password', async () => {
    const postgres = await startPostgres();
    try {
      const url = (await postgres.createDatabase('npm_start')).replace('//postgres@', '//postgres:hunter2@');
      const dbPath = join(folder, 'postgres', 'servicepay.db');
      const child = npmStart({ SERVICEPAY_DATABASE_URL: url, SERVICEPAY_DB: dbPath });
      const seen = await banner(child);
      expect(seen.printed).toContain(
        `(database postgres://postgres:…@127.0.0.1:${postgres.port}/npm_start, webhooks on the fast schedule)`,
      );
      expect(seen.printed).not.toContain('hunter2');

      const created = await createSession(seen.api, seen.secretKey);
      const pool = openPool(url, { max: 1 });
      try {
        const found = await pool.query('SELECT id FROM sessions WHERE id = $1', [created.id]);
        expect(found.rows).toEqual([{ id: created.id }]);
      } finally {
        await pool.end();
      }
      // No SQLite database was opened for the service (the shop keeps its own orders beside where it would be).
      expect(existsSync(dbPath)).toBe(false);
      await expectCleanStop(child, seen, 'SIGINT');
    } finally {
      await postgres.stop();
    }
  });

  it.each([
    ['waits 2.5 s, then stops', 'forced to stop after 2.5 s'],
    ['stops at once on a second Ctrl-C', 'stopped again before everything closed'],
  ])(
    'says what is still open, exit 1, when the database stops answering during a stop: %s',
    async (_, why) => {
      const postgres = await startPostgres();
      try {
        const url = await postgres.createDatabase('npm_start_hangs');
        const child = npmStart({
          SERVICEPAY_DATABASE_URL: url,
          SERVICEPAY_DB: join(folder, `hangs-${why.length}`, 'servicepay.db'),
        });
        await banner(child);
        // The whole cluster paused, as a database host that stopped answering: the service's last write on close
        // waits for it (a new connection too), while the example shop, on its own SQLite file, closes.
        const paused = clusterProcesses(postgres.dataDir);
        const after = (ms: number) =>
          new Promise<'still running'>((resolve) => setTimeout(resolve, ms, 'still running'));
        let code: number | null | 'still running';
        for (const pid of paused) process.kill(pid, 'SIGSTOP');
        try {
          child.child.kill('SIGINT');
          if (why.startsWith('stopped again')) {
            await after(700);
            child.child.kill('SIGINT');
          }
          // Bounded, so that a stop that never ends still lets the cluster go on and be removed.
          code = await Promise.race([child.exited, after(10_000)]);
        } finally {
          for (const pid of paused) process.kill(pid, 'SIGCONT');
        }
        if (code === 'still running') child.child.kill('SIGKILL');
        expect(code).toBe(1);
        expect(child.output()).toContain(
          `npm start: ${why}; still open: the service (API, portal, widget hosts)\n`,
        );
      } finally {
        await postgres.stop();
      }
    },
  );
});

/** The postmaster of the cluster in `dataDir` and every process it started (its backends and workers). */
function clusterProcesses(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // The parent pid is the second field after the command name, which may hold spaces.
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false; // gone since the listing
      }
    })
    .map(Number);
  return [postmaster, ...children];
}
