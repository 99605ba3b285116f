import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// `npm run release` makes the four installable artefacts of a release with their SHA-256 sums, and each npm
// package is ready to publish: `npm publish --dry-run` passes on its tarball, with the metadata provenance needs.
// Then what a new user does first: a project outside the repository installs the SDK from its tarball exactly as
// the SDK README says, and runs the README's quick start against the real reference server on loopback.
// The release packs what `npm test`'s build made (--no-build): a build here would rewrite dist/ under the suites
// running beside this one. The plugin's zip is packed by PHP, which the plugin suites need too.

const run = promisify(execFile);
const phpAvailable =
  spawnSync('php', ['-r', 'echo extension_loaded("zip") ? 1 : 0;']).stdout?.toString() === '1';

const PACKAGES = [
  // The SDK takes Node's modules with process.getBuiltinModule (Node 22.3), so that it loads without Node.
  { folder: 'sdk', name: '@servicepay/node', tarball: 'servicepay-node', node: '>=22.3' },
  { folder: 'widget', name: '@servicepay/widget', tarball: 'servicepay-widget', node: '>=22' },
  { folder: 'widget/react', name: '@servicepay/react', tarball: 'servicepay-react', node: '>=22' },
] as const;

const versionOf = (folder: string) =>
  (JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8')) as { version: string }).version;

const folder = mkdtempSync(join(tmpdir(), 'servicepay-release-'));
const out = join(folder, 'release');
let printed = '';

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe.runIf(phpAvailable)('npm run release', () => {
  beforeAll(async () => {
    ({ stdout: printed } = await run('npm', ['run', 'release', '--', '--no-build', '--out', out], {
      cwd: ROOT,
      timeout: 120_000,
    }));
  }, 150_000);

  it('writes the three npm tarballs and the plugin zip into one folder, with sums sha256sum -c accepts', async () => {
    const expected = [
      ...PACKAGES.map(({ folder, tarball }) => `${tarball}-${versionOf(folder)}.tgz`),
      `servicepay-woocommerce-${versionOf('woocommerce-plugin')}.zip`,
    ];
    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums.map((line) => line.split('  ')[1])).toEqual(expected);
    for (const line of sums) expect(line).toMatch(/^[0-9a-f]{64} {2}\S+$/);
    const { stdout } = await run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    expect(stdout.trim().split('\n')).toEqual(expected.map((name) => `${name}: OK`));
    for (const name of [...expected, 'SHA256SUMS']) expect(printed).toContain(name);
  });

  it.each(PACKAGES)(
    '$name passes npm publish --dry-run, public, with the metadata provenance needs',
    async ({ folder, name, tarball, node }) => {
      const file = join(out, `${tarball}-${versionOf(folder)}.tgz`);
      const { stdout, stderr } = await run('npm', ['publish', '--dry-run', file], {
        cwd: folder === 'sdk' ? out : out,
      });
      const said = `${stdout}${stderr}`;
      expect(said).toContain(`+ ${name}@${versionOf(folder)}`);
      expect(said).toMatch(/with tag latest and public access \(dry-run\)/);
      const { stdout: listing } = await run('tar', ['-tzf', file]);
      const files = listing.trim().split('\n');
      for (const shipped of [
        'package/package.json',
        'package/README.md',
        'package/CHANGELOG.md',
        'package/LICENSE',
      ])
        expect(files).toContain(shipped);
      // Nothing but the build and the documents: no sources, tests or configuration.
      expect(
        files.filter(
          (path) => !/^package\/(dist\/|package\.json$|README\.md$|CHANGELOG\.md$|LICENSE$)/.test(path),
        ),
      ).toEqual([]);
      const { stdout: manifestText } = await run('tar', ['-xzOf', file, 'package/package.json']);
      const manifest = JSON.parse(manifestText) as Record<string, unknown>;
      expect(manifest).not.toHaveProperty('private');
      expect(manifest).toMatchObject({
        name,
        license: 'MIT',
        engines: { node },
        repository: {
          type: 'git',
          url: 'git+https://github.com/servicepay/servicepay.git',
          directory: folder,
        },
        publishConfig: { access: 'public', provenance: true },
      });
      expect(readFileSync(join(ROOT, folder, 'CHANGELOG.md'), 'utf8')).toMatch(/^## Unreleased$/m);
    },
  );

  it.each(PACKAGES)('$name passes publint', async ({ folder, tarball }) => {
    const file = join(out, `${tarball}-${versionOf(folder)}.tgz`);
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'publint'), [file, '--strict']);
    expect(stdout).toContain('All good');
  });

  it('@servicepay/react has types wherever it can be imported: ESM, and bundlers', async () => {
    const file = join(out, `servicepay-react-${versionOf('widget/react')}.tgz`);
    const result = await run(join(ROOT, 'node_modules', '.bin', 'attw'), [file, '--format', 'json']).catch(
      (error: { stdout?: string }) => error,
    );
    const report = JSON.parse(String(result.stdout)) as {
      analysis: { problems: Array<{ resolutionKind?: string }> };
    };
    // An ESM-only package (React apps import it, never require it): what CommonJS resolutions cannot load is
    // expected, as attw's own `--profile esm-only` says.
    const ESM_ONLY_IGNORES = ['node10', 'node16-cjs'];
    expect(
      report.analysis.problems.filter((problem) => !ESM_ONLY_IGNORES.includes(problem.resolutionKind ?? '')),
    ).toEqual([]);
  });

  it('the plugin zip unpacks to servicepay-woocommerce/ at the version its header and readme.txt say', async () => {
    const version = versionOf('woocommerce-plugin');
    const zip = join(out, `servicepay-woocommerce-${version}.zip`);
    const { stdout } = await run('unzip', ['-Z1', zip]);
    const entries = stdout.trim().split('\n');
    expect(entries).toContain('servicepay-woocommerce/servicepay-woocommerce.php');
    expect(entries.every((entry) => entry.startsWith('servicepay-woocommerce/'))).toBe(true);
    const { stdout: header } = await run('unzip', [
      '-p',
      zip,
      'servicepay-woocommerce/servicepay-woocommerce.php',
    ]);
    expect(header).toMatch(new RegExp(`^ \\* Version:\\s+${version.replaceAll('.', '\\.')}$`, 'm'));
    const { stdout: readme } = await run('unzip', ['-p', zip, 'servicepay-woocommerce/readme.txt']);
    expect(readme).toMatch(new RegExp(`^Stable tag: ${version.replaceAll('.', '\\.')}$`, 'm'));
  });

  it.each([
    ...PACKAGES,
    { folder: 'woocommerce-plugin', name: 'servicepay-woocommerce', tarball: 'servicepay-woocommerce' },
  ])(
    "$name's README says how to install it from the release today and from the registry once published",
    ({ folder, name, tarball }) => {
      const readme = readFileSync(join(ROOT, folder, 'README.md'), 'utf8');
      const version = versionOf(folder);
      if (folder === 'woocommerce-plugin') {
        expect(readme).toContain(`${tarball}-${version}.zip`);
        return;
      }
      expect(readme).toContain(`npm install ./${tarball}-${version}.tgz`);
      expect(readme).toContain(`npm install ${name}`);
      expect(readme).toContain('npm run release');
    },
  );
});

/** The ```lang blocks after the heading `## section` of the SDK README, up to the next `## `. */
function sdkReadmeBlocks(section: string, language: string): string[] {
  const readme = readFileSync(join(ROOT, 'sdk', 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end);
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (match) => match[1] as string,
  );
}

describe.runIf(phpAvailable)('a new project, outside the repository, as the SDK README says', () => {
  let server: RunningServer;
  const project = join(folder, 'my-shop');

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('installs @servicepay/node from its tarball and pays a session with the quick start', async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'my-shop', private: true }, null, 2)}\n`,
    );
    const tarball = `servicepay-node-${versionOf('sdk')}.tgz`;
    // "copy the tarball into your project, then" the README's command, as it is written.
    copyFileSync(join(out, tarball), join(project, tarball));
    const [install] = sdkReadmeBlocks('Install', 'sh');
    expect(install?.trim()).toBe(`npm install ./${tarball}`);
    const installed = await run('bash', ['-c', install as string], {
      cwd: project,
      timeout: 180_000,
      env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
    });
    expect(`${installed.stdout}${installed.stderr}`).not.toContain('EBADENGINE');
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['@servicepay/node']).toBe(`file:${tarball}`);

    // The quick start, saved as pay.mjs, run with the command the README gives, the key `npm start` would print
    // and the address of this test's service (the README's default is npm start's 127.0.0.1:4242).
    const [code] = sdkReadmeBlocks('Quick start', 'ts');
    const [command] = sdkReadmeBlocks('Quick start', 'sh');
    writeFileSync(join(project, 'pay.mjs'), code as string);
    const { keys } = await server.createBusiness({ name: 'My Shop' });
    const line = (command as string).split('\n')[0] as string;
    expect(line).toBe('SERVICEPAY_SECRET_KEY=sk_test_... node pay.mjs');
    const { stdout } = await run('bash', ['-c', line.replace('sk_test_...', keys.test.secretKey)], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SERVICEPAY_API_URL: server.baseUrl },
    });
    const expected = /^# prints: (.+)$/m.exec(command as string)?.[1];
    expect(stdout.trim()).toBe(expected);
    // The service paid exactly that session, once.
    const paid = await server.rows<{ status: string; amount: number }>('SELECT status, amount FROM sessions');
    expect(paid).toEqual([{ status: 'successful', amount: 500_000 }]);
  });
});
