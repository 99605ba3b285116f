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
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createContext, runInContext } from 'node:vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
/** What the SDK may depend on: the HTTP client, the schemas, and the UUIDv7 of its idempotency keys. */
const DEPENDENCIES = ['undici', 'uuid', 'zod'];
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
  for (const file of ['README.md', 'CHANGELOG.md', 'LICENSE']) {
    if (existsSync(join(sdkDir, file))) copyFileSync(join(sdkDir, file), join(pkgDir, file));
  }
  await run(bin('tsup'), ['--out-dir', join(pkgDir, 'dist'), '--silent'], { cwd: sdkDir });
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', workDir], { cwd: pkgDir });
  const name = readdirSync(workDir).find((file) => file.endsWith('.tgz'));
  if (name === undefined) throw new Error('npm pack made no tarball');
  tarball = join(workDir, name);
  // A project that installed the tarball: the package unpacked into node_modules, its dependencies linked
  // from where the SDK itself resolves them (uuid: the SDK's own copy, not an older one hoisted for a tool).
  const project = join(workDir, 'project');
  mkdirSync(join(project, 'node_modules', '@servicepay'), { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', join(project, 'node_modules', '@servicepay')]);
  await run('mv', [
    join(project, 'node_modules', '@servicepay', 'package'),
    join(project, 'node_modules', '@servicepay', 'node'),
  ]);
  const resolveFromSdk = createRequire(join(sdkDir, 'package.json'));
  for (const dep of DEPENDENCIES) {
    const installed = dirname(resolveFromSdk.resolve(`${dep}/package.json`));
    symlinkSync(installed, join(project, 'node_modules', dep));
  }
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

  it('ships its MIT LICENSE', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    expect(stdout.split('\n')).toContain('package/LICENSE');
    const license = readFileSync(
      join(workDir, 'project', 'node_modules', '@servicepay', 'node', 'LICENSE'),
      'utf8',
    );
    expect(license).toMatch(/^MIT License/);
    expect(license).toContain('ServicePay contributors');
  });

  it('depends on undici, uuid and zod only, and its code imports nothing else (nor node:* at load)', async () => {
    const pkg = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies?: unknown;
    };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(DEPENDENCIES);
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
    expect([...imported].filter((name) => !name.startsWith('node:')).sort()).toEqual(DEPENDENCIES);
    // node:crypto is taken with process.getBuiltinModule when a synchronous helper first needs it.
    expect([...imported].filter((name) => name.startsWith('node:'))).toEqual([]);
  });

  it('keeps the class names in both builds, so an error logs as the class it is', async () => {
    // esbuild renames a class it lowers for CommonJS (`_class2`) unless told to keep names.
    const names =
      "['ServicePay','ServicePayError','AuthenticationError','PermissionError','RateLimitError','SignatureVerificationError','WebhookPayloadError','Webhooks']";
    const esmScript = `const sdk = await import('@servicepay/node'); let thrown; try { new sdk.ServicePay('pk_test_x'); } catch (e) { thrown = e.constructor.name; } console.log(JSON.stringify({ names: ${names}.map((n) => sdk[n].name), thrown }));`;
    const cjsScript = `const sdk = require('@servicepay/node'); let thrown; try { new sdk.ServicePay('pk_test_x'); } catch (e) { thrown = e.constructor.name; } console.log(JSON.stringify({ names: ${names}.map((n) => sdk[n].name), thrown }));`;
    const project = join(workDir, 'project');
    const expected = {
      names: [
        'ServicePay',
        'ServicePayError',
        'AuthenticationError',
        'PermissionError',
        'RateLimitError',
        'SignatureVerificationError',
        'WebhookPayloadError',
        'Webhooks',
      ],
      thrown: 'PermissionError',
    };
    const esm = await run(process.execPath, ['--input-type=module', '-e', esmScript], { cwd: project });
    expect(JSON.parse(esm.stdout)).toEqual(expected);
    const cjs = await run(process.execPath, ['-e', cjsScript], { cwd: project });
    expect(JSON.parse(cjs.stdout)).toEqual(expected);
  });

  it('runs constructEventAsync of @servicepay/node/webhooks in a node:vm context holding only Web Crypto, TextEncoder and TextDecoder (no Buffer, process, require)', async () => {
    const project = join(workDir, 'project');
    // Bundled for a neutral platform: an import of any node:* module (or of undici) would fail the build.
    const bundle = await build({
      stdin: {
        contents: "export * from '@servicepay/node/webhooks';",
        resolveDir: project,
        loader: 'js',
      },
      bundle: true,
      platform: 'neutral',
      format: 'iife',
      globalName: 'ServicePayWebhooks',
      write: false,
      logLevel: 'silent',
    });
    const code = bundle.outputFiles[0]?.text ?? '';
    const context = createContext({ crypto: globalThis.crypto, TextEncoder, TextDecoder });
    runInContext(code, context);
    const secret = 'whsec_edge0000000000000000000000000';
    const body = JSON.stringify({
      id: 'evt_edge',
      type: 'session.refunded',
      environment: 'test',
      createdAt: '2026-01-01T00:00:00.000Z',
      data: { session: { id: 'ses_1' } },
    });
    const t = Math.floor(Date.now() / 1000);
    const { createHmac } = await import('node:crypto');
    const header = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
    context.input = { body, header, secret };
    const result = (await runInContext(
      `(async () => {
        const { constructEventAsync, SignatureVerificationError } = ServicePayWebhooks;
        const globals = [typeof Buffer, typeof process, typeof require, typeof setTimeout];
        const event = await constructEventAsync(input.body, input.header, input.secret);
        let refused;
        try {
          await constructEventAsync(input.body.replace('ses_1', 'ses_2'), input.header, input.secret);
        } catch (error) {
          refused = [error instanceof SignatureVerificationError, error.code];
        }
        const bytes = await constructEventAsync(new TextEncoder().encode(input.body), input.header, input.secret);
        return JSON.stringify({ globals, type: event.type, id: bytes.id, refused });
      })()`,
      context,
    )) as string;
    expect(JSON.parse(result)).toEqual({
      globals: ['undefined', 'undefined', 'undefined', 'undefined'],
      type: 'session.refunded',
      id: 'evt_edge',
      refused: [true, 'webhook_signature_mismatch'],
    });
  });

  it('can be imported and required by a project that installs it', async () => {
    const project = join(workDir, 'project');
    const esmScript = [
      "import { ServicePay, SignatureVerificationError, constructEvent, generateTestHeader } from '@servicepay/node';",
      "import { SessionSchema } from '@servicepay/node/protocol';",
      "import { constructEventAsync } from '@servicepay/node/webhooks';",
      "const c = new ServicePay('sk_test_' + 'a'.repeat(32));",
      "const p = '{}'; const h = generateTestHeader({ payload: p, secret: 'whsec_x' });",
      'let code; try { constructEvent(p, h, "whsec_x"); } catch (e) { code = e.code; }',
      'let edge; try { await constructEventAsync(p, h, "whsec_y"); } catch (e) { edge = [e instanceof SignatureVerificationError, e.code]; }',
      // The exports take node:stream when first used, not at load: in the built package too.
      "const nobody = new ServicePay('sk_test_' + 'a'.repeat(32), { baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });",
      'const bad = await nobody.exports.sessions().catch((e) => e.code);',
      'console.log(JSON.stringify({ env: c.environment, schema: typeof SessionSchema.parse, code, edge, exports: [typeof c.exports.balanceTransactions, bad] }));',
    ].join('\n');
    const cjsScript = [
      "const { ServicePay, PermissionError, SignatureVerificationError } = require('@servicepay/node');",
      "const { SessionSchema } = require('@servicepay/node/protocol');",
      "const { constructEventAsync } = require('@servicepay/node/webhooks');",
      "let code; try { new ServicePay('pk_test_x'); } catch (e) { code = e instanceof PermissionError && e.code; }",
      "constructEventAsync('{}', 't=1,v1=' + '0'.repeat(64), 'whsec_x').catch((e) => {",
      '  const edge = [e instanceof SignatureVerificationError, e.code];',
      "  console.log(JSON.stringify({ env: new ServicePay('sk_live_' + 'a'.repeat(32)).environment, schema: typeof SessionSchema.parse, code, edge }));",
      '});',
    ].join('\n');
    const esm = await run(process.execPath, ['--input-type=module', '-e', esmScript], { cwd: project });
    expect(JSON.parse(esm.stdout)).toEqual({
      env: 'test',
      schema: 'function',
      code: 'webhook_payload_invalid',
      edge: [true, 'webhook_signature_mismatch'],
      exports: ['function', 'connection_error'],
    });
    const cjs = await run(process.execPath, ['-e', cjsScript], { cwd: project });
    expect(JSON.parse(cjs.stdout)).toEqual({
      env: 'live',
      schema: 'function',
      code: 'publishable_key_not_allowed',
      edge: [true, 'webhook_signature_mismatch'],
    });
  });
});
