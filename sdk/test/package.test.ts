import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const sdkDir = fileURLToPath(new URL('..', import.meta.url));
const rootDir = join(sdkDir, '..');
const bin = (name: string) => join(rootDir, 'node_modules', '.bin', name);

// The package is built into a temporary copy, never into sdk/dist: other packages resolve
// '@servicepay/node' to sdk/dist while their tests run, and tsup cleans its output directory first.
let workDir: string;
let tarball: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'servicepay-sdk-pack-'));
  const pkgDir = join(workDir, 'package');
  mkdirSync(pkgDir);
  copyFileSync(join(sdkDir, 'package.json'), join(pkgDir, 'package.json'));
  if (existsSync(join(sdkDir, 'README.md')))
    copyFileSync(join(sdkDir, 'README.md'), join(pkgDir, 'README.md'));
  await run(bin('tsup'), ['--out-dir', join(pkgDir, 'dist'), '--silent'], { cwd: sdkDir });
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', workDir], { cwd: pkgDir });
  const name = readdirSync(workDir).find((file) => file.endsWith('.tgz'));
  if (name === undefined) throw new Error('npm pack made no tarball');
  tarball = join(workDir, name);
}, 120_000);

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe('the published package', () => {
  it('passes publint', async () => {
    const { stdout } = await run(bin('publint'), [tarball, '--strict']);
    expect(stdout).toContain('All good');
  });

  it('passes @arethetypeswrong/cli for every entry point and resolution mode', async () => {
    // attw exits non-zero on any problem; the JSON says which.
    const result = await run(bin('attw'), [tarball, '--format', 'json']).catch(
      (error: { stdout?: string; code?: number }) => error,
    );
    const report = JSON.parse(String(result.stdout)) as { analysis: { problems: unknown[] } };
    expect(report.analysis.problems).toEqual([]);
  });

  it('depends on undici and zod only, and its code imports nothing else', async () => {
    const pkg = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies?: unknown;
    };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['undici', 'zod']);
    expect(pkg.peerDependencies).toBeUndefined();
    const dist = join(workDir, 'package', 'dist');
    const imported = new Set<string>();
    for (const file of readdirSync(dist).filter((f) => /\.(c?js)$/.test(f))) {
      const code = readFileSync(join(dist, file), 'utf8');
      // esbuild writes imports with double quotes at the start of a line; TSDoc examples use single quotes.
      for (const match of code.matchAll(/^import [^\n]*from "([^"]+)"|require\("([^"]+)"\)/gm)) {
        const name = match[1] ?? match[2];
        if (name !== undefined && !name.startsWith('.')) imported.add(name);
      }
    }
    expect([...imported].filter((name) => !name.startsWith('node:')).sort()).toEqual(['undici', 'zod']);
    expect([...imported].filter((name) => name.startsWith('node:'))).toEqual(['node:crypto']);
  });

  it('can be imported and required by a project that installs it', async () => {
    const project = join(workDir, 'project');
    mkdirSync(join(project, 'node_modules', '@servicepay'), { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', join(project, 'node_modules', '@servicepay')]);
    // npm unpacks into `package/`; the dependencies come from the repository's own node_modules.
    await run('mv', [
      join(project, 'node_modules', '@servicepay', 'package'),
      join(project, 'node_modules', '@servicepay', 'node'),
    ]);
    for (const dep of ['undici', 'zod'])
      symlinkSync(join(rootDir, 'node_modules', dep), join(project, 'node_modules', dep));
    const script = (kind: 'esm' | 'cjs') =>
      kind === 'esm'
        ? "import { ServicePay, constructEvent, generateTestHeader } from '@servicepay/node'; import { SessionSchema } from '@servicepay/node/protocol'; const c = new ServicePay('sk_test_' + 'a'.repeat(32)); const p = '{}'; let code; try { constructEvent(p, generateTestHeader({ payload: p, secret: 'whsec_x' }), 'whsec_x'); } catch (e) { code = e.code; } console.log(JSON.stringify({ env: c.environment, schema: typeof SessionSchema.parse, code }));"
        : "const { ServicePay, PermissionError } = require('@servicepay/node'); const { SessionSchema } = require('@servicepay/node/protocol'); let code; try { new ServicePay('pk_test_x'); } catch (e) { code = e instanceof PermissionError && e.code; } console.log(JSON.stringify({ env: new ServicePay('sk_live_' + 'a'.repeat(32)).environment, schema: typeof SessionSchema.parse, code }));";
    const esm = await run(process.execPath, ['--input-type=module', '-e', script('esm')], { cwd: project });
    expect(JSON.parse(esm.stdout)).toEqual({
      env: 'test',
      schema: 'function',
      code: 'webhook_payload_invalid',
    });
    const cjs = await run(process.execPath, ['-e', script('cjs')], { cwd: project });
    expect(JSON.parse(cjs.stdout)).toEqual({
      env: 'live',
      schema: 'function',
      code: 'publishable_key_not_allowed',
    });
  });
});
