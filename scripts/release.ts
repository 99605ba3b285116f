/**
 * `npm run release`: the four installable artefacts of a ServicePay release in one folder, `release/`, with their
 * SHA-256 sums, ready to attach to a release or to install from today (nothing is on the npm registry yet):
 *
 *   servicepay-node-<version>.tgz         @servicepay/node    npm install ./servicepay-node-<version>.tgz
 *   servicepay-widget-<version>.tgz       @servicepay/widget
 *   servicepay-react-<version>.tgz        @servicepay/react
 *   servicepay-woocommerce-<version>.zip  the WordPress plugin (Plugins → Add New → Upload Plugin)
 *   SHA256SUMS                            `sha256sum -c SHA256SUMS` checks them
 *
 * It builds the four packages first (`--no-build` packs what is built, as the suite does after `npm test`'s
 * build), then packs each npm package exactly as `npm publish` would (`npm pack`), and copies the plugin's zip,
 * which needs PHP to build. `--out DIR` writes elsewhere. The tarballs are what `npm publish <tarball>` sends:
 * the packaging decisions (files, exports, metadata, provenance) are in each package's README.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The npm packages of a release, by folder, each with a file its build must have made. */
const NPM_PACKAGES = [
  { folder: 'sdk', built: 'dist/index.cjs' },
  { folder: 'widget', built: 'dist/widget.js' },
  { folder: 'widget/react', built: 'dist/index.js' },
] as const;
const PLUGIN = 'woocommerce-plugin';
/** What the plugin's build packs (bin/build-zip.php). */
const PLUGIN_ZIP = 'servicepay-woocommerce.zip';

class ReleaseError extends Error {}

interface Manifest {
  name: string;
  version: string;
}

const manifestOf = (folder: string): Manifest =>
  JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8')) as Manifest;

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function build(): void {
  const names = [...NPM_PACKAGES.map(({ folder }) => folder), PLUGIN].map(
    (folder) => manifestOf(folder).name,
  );
  console.log(`Building ${names.join(', ')}…`);
  // By package name: `--workspace widget` would also match the nested widget/react workspace.
  execFileSync('npm', ['run', 'build', ...names.flatMap((name) => ['--workspace', name])], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** `npm pack` of one workspace into `out`, without its prepack (it is built); the tarball's file name. */
function pack(folder: string, out: string): string {
  const output = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], {
    cwd: join(ROOT, folder),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [packed] = JSON.parse(output) as Array<{ filename: string }>;
  if (!packed) throw new ReleaseError(`npm pack of ${folder} made no tarball`);
  return packed.filename;
}

/** Writes the release into `out` and returns the artefacts' names (the sums file last). */
function release(options: { out: string; build: boolean }): string[] {
  if (options.build) build();
  for (const { folder, built } of NPM_PACKAGES) {
    if (!existsSync(join(ROOT, folder, built)))
      throw new ReleaseError(`${folder}/${built} is missing: run npm run release without --no-build`);
  }
  const zip = join(ROOT, PLUGIN, PLUGIN_ZIP);
  if (!existsSync(zip))
    throw new ReleaseError(
      `${PLUGIN}/${PLUGIN_ZIP} is missing: its build packs it with PHP (php-cli and php-zip), which this machine lacks or has not run`,
    );
  rmSync(options.out, { recursive: true, force: true });
  mkdirSync(options.out, { recursive: true });
  const artefacts = NPM_PACKAGES.map(({ folder }) => pack(folder, options.out));
  const pluginName = `servicepay-woocommerce-${manifestOf(PLUGIN).version}.zip`;
  copyFileSync(zip, join(options.out, pluginName));
  artefacts.push(pluginName);
  // The format `sha256sum -c` reads: the hex digest, two spaces, the file name.
  const sums = artefacts.map((name) => `${sha256(join(options.out, name))}  ${name}\n`).join('');
  writeFileSync(join(options.out, 'SHA256SUMS'), sums);
  return [...artefacts, 'SHA256SUMS'];
}

function main(): void {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, 'no-build': { type: 'boolean' } },
    strict: true,
  });
  const out = resolve(values.out ?? join(ROOT, 'release'));
  const artefacts = release({ out, build: !values['no-build'] });
  console.log(`\nRelease in ${relative(process.cwd(), out) || '.'}/ (check with: sha256sum -c SHA256SUMS):`);
  for (const name of artefacts) {
    const kb = (statSync(join(out, name)).size / 1024).toFixed(1);
    console.log(`  ${name.padEnd(40)} ${kb.padStart(8)} KB`);
  }
}

try {
  main();
} catch (error) {
  const usage =
    error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
  console.error(`npm run release failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(usage ? 2 : 1);
}
