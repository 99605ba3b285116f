// @ts-check
/**
 * The Debian packages the project needs, each with how to tell it is there. `npm start` needs the compiler
 * that builds better-sqlite3; `npm test` needs every suite's browser, PHP, database and tool as well. Checked by
 * what a suite runs (a program on PATH, a PHP extension, PostgreSQL's binaries off PATH), not by dpkg, so a
 * machine that has them some other way is fine too.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * @typedef {{ packages: string[], why: string } & ({ program: string } | { phpExtension: string } | { postgresBinaries: true })} Requirement
 */

/** What better-sqlite3's native build needs (its prebuilt download is unreachable here). @type {Requirement[]} */
export const BUILD_REQUIREMENTS = [
  { program: 'python3', packages: ['python3'], why: 'node-gyp builds better-sqlite3' },
  { program: 'make', packages: ['make'], why: 'node-gyp builds better-sqlite3' },
  { program: 'g++', packages: ['g++'], why: 'node-gyp builds better-sqlite3' },
];

const PHP_PACKAGES = [
  'php-cli',
  'php-sqlite3',
  'php-curl',
  'php-xml',
  'php-mbstring',
  'php-zip',
  'php-intl',
  'php-gd',
];

/** What the suites need beyond the build. @type {Requirement[]} */
export const TEST_REQUIREMENTS = [
  ...BUILD_REQUIREMENTS,
  { program: 'chromium', packages: ['chromium'], why: 'the browser suites (playwright-core)' },
  {
    program: 'firefox-esr',
    packages: ['firefox-esr'],
    why: 'the browser suites in Firefox (puppeteer-core)',
  },
  {
    program: 'WebKitWebDriver',
    packages: ['webkit2gtk-driver'],
    why: 'the browser suites in WebKit (MiniBrowser)',
  },
  { program: 'xvfb-run', packages: ['xvfb'], why: 'a display for MiniBrowser' },
  // xvfb-run needs xauth, which xvfb only recommends (and the launcher installs without recommends).
  { program: 'xauth', packages: ['xauth'], why: 'xvfb-run' },
  { program: 'phpunit', packages: ['phpunit'], why: 'the WooCommerce plugin suites' },
  { program: 'unzip', packages: ['unzip'], why: 'the plugin zip check' },
  { program: 'xgettext', packages: ['gettext'], why: "the plugin's translation template" },
  { program: 'curl', packages: ['curl'], why: "the guides' commands (test/docs)" },
  { program: 'jq', packages: ['jq'], why: "the guides' commands (test/docs)" },
  { program: 'openssl', packages: ['openssl'], why: "the guides' commands (test/docs)" },
  { postgresBinaries: true, packages: ['postgresql'], why: 'the PostgreSQL suites (a scratch cluster)' },
  { program: 'mariadbd', packages: ['mariadb-server'], why: 'WooCommerce on MariaDB' },
  ...['sqlite3', 'pdo_sqlite', 'curl', 'dom', 'mbstring', 'zip', 'intl', 'gd'].map(
    /** @returns {Requirement} */
    (phpExtension) => ({ phpExtension, packages: PHP_PACKAGES, why: 'WordPress and WooCommerce' }),
  ),
  /** @type {Requirement} */ ({
    phpExtension: 'mysqli',
    packages: ['php-mysql'],
    why: 'WordPress on MariaDB',
  }),
];

/**
 * Whether `program` is an executable on `PATH`.
 *
 * @param {string} program
 */
export function onPath(program) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // Not in this folder; try the next.
    }
  }
  return false;
}

/** PHP's loaded extensions, lower-case (none where PHP is missing). */
function phpExtensions() {
  if (!onPath('php')) return new Set();
  try {
    const listed = execFileSync('php', ['-m'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return new Set(listed.split('\n').map((line) => line.trim().toLowerCase()));
  } catch {
    return new Set();
  }
}

/** Debian keeps PostgreSQL's server binaries off PATH, in /usr/lib/postgresql/<major>/bin. */
function postgresBinariesPresent() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return false;
  return readdirSync(root).some((major) => existsSync(join(root, major, 'bin', 'initdb')));
}

/**
 * The packages of `requirements` that this machine lacks, each once.
 *
 * @example
 * missingPackages(BUILD_REQUIREMENTS); // [] on a machine of this kind
 * @param {Requirement[]} requirements
 * @returns {string[]}
 */
export function missingPackages(requirements) {
  /** @type {Set<string> | undefined} */
  let extensions;
  const missing = new Set();
  for (const requirement of requirements) {
    let present;
    if ('program' in requirement) present = onPath(requirement.program);
    else if ('phpExtension' in requirement) {
      extensions ??= phpExtensions();
      present = extensions.has(requirement.phpExtension);
    } else present = postgresBinariesPresent();
    if (!present) for (const name of requirement.packages) missing.add(name);
  }
  return [...missing];
}
