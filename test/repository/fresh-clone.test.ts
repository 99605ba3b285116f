import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { ROOT, type RunningProcess, startProcess } from '../support/child-process.ts';

// Issue 34: a new user's first command on a fresh clone, with an empty home folder and the machine's own Node
// (20 on a machine of this kind): `npm start` brings Node 24 and the dependencies itself, prints the banner, and
// the example shop takes a test payment; a second `npm start` installs nothing. `npm test` on a fresh clone is
// what CI runs (.ci/run), so this file checks `start` and the launcher's refusals.
// The clone is of HEAD (a committed change is what a new user gets). npm's download cache is shared with this
// machine's, only so the run does not fetch 1,900 packages again: npm ci still installs and builds everything.

const folder = mkdtempSync(join(tmpdir(), 'servicepay-fresh-'));
const clone = join(folder, 'clone');
const home = join(folder, 'home');
/** A new terminal's PATH: the machine's Node, not the one running this test. */
const MACHINE_PATH = '/usr/local/bin:/usr/bin:/bin';
const started: RunningProcess[] = [];
const machineNodeMajor = Number(
  execFileSync('node', ['-p', 'process.versions.node'], {
    env: { PATH: MACHINE_PATH },
    encoding: 'utf8',
  }).split('.')[0],
);

function newUserEnv(): Record<string, string> {
  return {
    PATH: MACHINE_PATH,
    HOME: home,
    npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
    // Nothing of this test's own Node or npm run may leak into the new user's terminal.
    npm_config_nodedir: '',
    NODE_OPTIONS: '',
    SERVICEPAY_PORT: '0',
    SERVICEPAY_TEST_WIDGET_PORT: '0',
    SERVICEPAY_LIVE_WIDGET_PORT: '0',
    SHOP_PORT: '0',
  };
}

/** `npm start` as typed in a terminal: its own process group, so Ctrl-C reaches all of it. */
function npmStart(): RunningProcess {
  const child = startProcess('setsid', ['npm', 'start'], { cwd: clone, env: newUserEnv() });
  started.push(child);
  return child;
}

async function pressCtrlC(child: RunningProcess) {
  process.kill(-(child.child.pid as number), 'SIGINT');
  await child.exited;
}

const field = (printed: string, label: string, pattern = '(http://\\S+)') => {
  const value = new RegExp(`${label}\\s+${pattern}`).exec(printed)?.[1];
  if (!value) throw new Error(`npm start printed no ${label}:\n${printed}`);
  return value;
};

async function eventually<T>(check: () => Promise<T | undefined>, limitMs = 15_000): Promise<T> {
  const until = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('not within the limit');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(() => {
  mkdirSync(home);
  execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${ROOT}`, clone]);
});

afterAll(async () => {
  for (const child of started) {
    try {
      process.kill(-(child.child.pid as number), 'SIGKILL');
    } catch {
      // Already stopped, as the test asked.
    }
  }
  // A whole node_modules: on a loaded machine this takes a while.
  await rm(folder, { recursive: true, force: true });
}, 300_000);

describe('a fresh clone, an empty home folder, the machine Node', () => {
  it('npm start installs what it needs, prints the banner, and the example shop takes a test payment', async () => {
    const first = npmStart();
    await first.waitFor(/Press Ctrl\+C to stop/, 420_000);
    const printed = first.output();
    if (machineNodeMajor < 22) {
      expect(printed).toMatch(/npm start: Installing Node 24\.\d+\.\d+ \(once, ~5 s/);
    }
    expect(printed).toContain('npm start: Installing dependencies (npm ci, ~80 s; node_modules is missing)…');

    const api = field(printed, 'API');
    const shop = field(printed, 'Example shop');
    const secretKey = field(printed, 'secret key', '(sk_test_[0-9A-Za-z]{32})');
    const order = await call(shop, 'POST', '/api/orders', {
      json: { productId: 'notebook', name: 'Ada Lovelace', email: 'ada@example.com' },
    });
    expect(order.status, order.text).toBe(201);
    const checkout = await call(api, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: order.body.clientSecret },
    });
    expect(checkout.status, checkout.text).toBe(200);
    const { accountNumber } = checkout.body.data.virtualAccount as { accountNumber: string };
    const amount = checkout.body.data.session.amount as number;
    expect(amount).toBe(500_000);
    const transfer = await call(api, 'POST', '/api/test/transfers', {
      token: secretKey,
      json: { accountNumber, amount },
    });
    expect(transfer.status, transfer.text).toBe(200);
    const paid = await eventually(async () => {
      const seen = (await call(shop, 'GET', `/api/orders/${order.body.orderId}`)).body;
      return seen.status === 'paid' ? seen : undefined;
    });
    expect(paid).toMatchObject({ id: order.body.orderId, status: 'paid' });
    expect(order.body.amount).toBe(500_000);
    await pressCtrlC(first);

    // A second start installs nothing and builds nothing: straight to the banner.
    const second = npmStart();
    await second.waitFor(/Press Ctrl\+C to stop/, 120_000);
    expect(second.output()).not.toContain('Installing');
    expect(second.output()).not.toMatch(/^Building /m);
    await pressCtrlC(second);
  }, 600_000);

  // The README's by-hand install. From an empty clone it takes the very steps `npm start` took above (one function,
  // scripts/launch.mjs); here, on the clone those steps installed, it must find everything and install nothing.
  it('npm run setup, on the machine Node, finds Node 24 and the dependencies installed and installs nothing', () => {
    const run = spawnSync('npm', ['run', '--silent', 'setup'], {
      cwd: clone,
      env: newUserEnv(),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('Installing');
    expect(run.stderr).toMatch(
      machineNodeMajor < 22
        ? /npm run setup: Dependencies installed for that Node; `source scripts\/use-node\.sh` puts it on/
        : /npm run setup: Dependencies installed; this Node runs them\./,
    );
    // What it promises: the lockfile's packages, the native driver among them, are in place.
    expect(existsSync(join(clone, 'node_modules', 'better-sqlite3', 'package.json'))).toBe(true);
  });

  // Only where the machine's Node is too old (20 on a machine of this kind): a newer one has nothing to refuse.
  it.runIf(machineNodeMajor < 22)(
    'npm ci on too old a Node stops at once with one line that says what to run instead',
    () => {
      const refused = (() => {
        try {
          execFileSync('npm', ['ci', '--dry-run'], {
            cwd: clone,
            env: newUserEnv(),
            stdio: 'pipe',
            timeout: 60_000,
          });
          return '';
        } catch (error) {
          return String((error as { stderr: Buffer }).stderr);
        }
      })();
      expect(refused).toContain('EBADENGINE');
      expect(refused).toMatch(/instead":"on an older Node run npm run setup \(or npm start, npm test\)/);
      expect(refused).not.toContain('node-gyp');
    },
  );
});
