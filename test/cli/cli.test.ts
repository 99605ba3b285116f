import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  API_KEY_PATTERN,
  type CreatedBusiness,
  CreatedBusinessSchema,
  RolledKeySchema,
} from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, call, createSession, expectError, retrieveSession } from '../support/api.ts';

// The `servicepay-server` binary as a user runs it: real processes on one SQLite file.

const BIN = fileURLToPath(new URL('../../reference-server/bin/servicepay-server.js', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'servicepay-cli-'));
const dbPath = join(folder, 'servicepay.db');

type Run = { code: number | null; stdout: string; stderr: string };

/** The settings `transfer` and `start` read, cleared so the runner's own environment cannot change what a test sees. */
const CLEAN_ENV = {
  SERVICEPAY_API_URL: undefined,
  SERVICEPAY_PORT: undefined,
  SERVICEPAY_HEADERS_TIMEOUT_MS: undefined,
  SERVICEPAY_REQUEST_TIMEOUT_MS: undefined,
  SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS: undefined,
  SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS: undefined,
};

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { timeout: 30_000, env: { ...process.env, ...CLEAN_ENV, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A loopback port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A fresh test session of a new business, opened by the checkout so its account exists. */
async function openedSession() {
  const created = await createBusiness();
  const key = created.keys.test.secretKey;
  const session = await createSession(baseUrl, key);
  const opened = await bootstrap(baseUrl, session.clientSecret);
  return { key, session, accountNumber: opened.virtualAccount.accountNumber };
}

let server: ChildProcess;
let baseUrl: string;
/** Where the started server serves its metrics (`--metrics-port 0`: a free port of its own). */
let metricsUrl: string;

beforeAll(async () => {
  server = spawn(
    process.execPath,
    [
      BIN,
      'start',
      '--db',
      dbPath,
      '--port',
      '0',
      '--test-widget-port',
      '0',
      '--live-widget-port',
      '0',
      '--metrics-port',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      const metrics = /metrics: (http:\/\/\S+)/.exec(out);
      if (match?.[1] && metrics?.[1]) {
        metricsUrl = metrics[1];
        resolve(match[1]);
      }
    });
    server.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
});

afterAll(async () => {
  if (server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(folder, { recursive: true, force: true });
});

async function createBusiness(...extra: string[]): Promise<CreatedBusiness> {
  const run = await cli(['business', 'create', '--name', 'CLI Shop', '--db', dbPath, '--json', ...extra]);
  expect(run.code, run.stderr).toBe(0);
  return CreatedBusinessSchema.parse(JSON.parse(run.stdout));
}

describe('servicepay-server', () => {
  it('start answers its health check', async () => {
    const response = await call(baseUrl, 'GET', '/health');
    expect(response.status).toBe(200);
    // Issue 28: liveness and readiness apart.
    expect((await call(baseUrl, 'GET', '/health/live')).body.data).toEqual({ status: 'live' });
    expect((await call(baseUrl, 'GET', '/health/ready')).body.data).toEqual({ status: 'ready' });
  });

  it('start --metrics-port serves Prometheus metrics on a port of its own, never on the API port', async () => {
    expect(new URL(metricsUrl).port).not.toBe(new URL(baseUrl).port);
    await call(baseUrl, 'GET', '/health/ready');
    const scraped = await fetch(metricsUrl);
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    expect(text).toMatch(
      /servicepay_http_request_duration_seconds_count\{method="GET",route="\/health\/ready",status="200"\} [1-9]/,
    );
    expect(text).toContain('servicepay_ready 1');
    expect((await call(baseUrl, 'GET', '/metrics')).status).toBe(404);
  });

  it('business create --json prints the documented shape with both key pairs', async () => {
    const created = await createBusiness();
    expect(created.business.name).toBe('CLI Shop');
    expect(created.business.id).toMatch(/^biz_[0-9A-Za-z]+$/);
    const keys = [
      created.keys.test.secretKey,
      created.keys.test.publishableKey,
      created.keys.live.secretKey,
      created.keys.live.publishableKey,
    ];
    for (const key of keys) expect(key).toMatch(/^(sk|pk)_(test|live)_[0-9A-Za-z]{32}$/);
    expect(keys.map((key) => key.slice(0, 8))).toEqual(['sk_test_', 'pk_test_', 'sk_live_', 'pk_live_']);
    expect(keys.every((key) => API_KEY_PATTERN.test(key))).toBe(true);
    // The running server (another process) sees the new business at once.
    expect(
      (await call(baseUrl, 'GET', '/api/widget/sessions', { token: created.keys.test.secretKey })).status,
    ).toBe(200);
  });

  it('keys roll revokes the old key at once on the running server', async () => {
    const created = await createBusiness();
    const old = created.keys.test.secretKey;
    expect((await call(baseUrl, 'GET', '/api/widget/sessions', { token: old })).status).toBe(200);
    const run = await cli([
      'keys',
      'roll',
      '--business',
      created.business.id,
      '--environment',
      'test',
      '--kind',
      'secret',
      '--db',
      dbPath,
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const rolled = RolledKeySchema.parse(JSON.parse(run.stdout));
    expect(rolled).toMatchObject({ environment: 'test', kind: 'secret' });
    expect(rolled.key).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(rolled.revokedKeyHint).toContain(old.slice(-4));
    expect(rolled.revokedKeyHint).not.toContain(old);
    expectError(await call(baseUrl, 'GET', '/api/widget/sessions', { token: old }), 401, 'api_key_revoked');
    expect((await call(baseUrl, 'GET', '/api/widget/sessions', { token: rolled.key })).status).toBe(200);
    // The other keys of the business are untouched.
    expect(
      (await call(baseUrl, 'GET', '/api/widget/profile', { token: created.keys.test.publishableKey })).status,
    ).toBe(200);
  });

  it('kyc approve turns the live key 403 into 2xx', async () => {
    const created = await createBusiness();
    const live = created.keys.live.secretKey;
    expectError(await call(baseUrl, 'GET', '/api/widget/sessions', { token: live }), 403, 'kyc_required');
    const run = await cli(['kyc', 'approve', '--business', created.business.id, '--db', dbPath]);
    expect(run.code, run.stderr).toBe(0);
    expect((await call(baseUrl, 'GET', '/api/widget/sessions', { token: live })).status).toBe(200);
  });

  it('business create --kyc-approved makes live keys work at once', async () => {
    const created = await createBusiness('--kyc-approved');
    expect(
      (await call(baseUrl, 'GET', '/api/widget/sessions', { token: created.keys.live.secretKey })).status,
    ).toBe(200);
  });

  it('transfer pays a session through the simulated bank', async () => {
    const created = await createBusiness();
    const key = created.keys.test.secretKey;
    const session = await createSession(baseUrl, key);
    const opened = await bootstrap(baseUrl, session.clientSecret);
    const run = await cli([
      'transfer',
      '--account',
      opened.virtualAccount.accountNumber,
      '--amount',
      String(session.amount),
      '--api',
      baseUrl,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'credited', notification: 'delivered' });
    expect((await retrieveSession(baseUrl, key, session.id)).status).toBe('successful');
  });

  it('transfer finds the server through SERVICEPAY_API_URL, without --api', async () => {
    const { key, session, accountNumber } = await openedSession();
    const run = await cli(['transfer', '--account', accountNumber, '--amount', String(session.amount)], {
      SERVICEPAY_API_URL: baseUrl,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'credited', amount: session.amount });
    expect((await retrieveSession(baseUrl, key, session.id)).status).toBe('successful');
  });

  it('transfer finds the server through SERVICEPAY_PORT, as npm start set it', async () => {
    const { key, session, accountNumber } = await openedSession();
    const run = await cli(['transfer', '--account', accountNumber, '--amount', '1'], {
      SERVICEPAY_PORT: new URL(baseUrl).port,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'returned', amount: 1 });
    expect((await retrieveSession(baseUrl, key, session.id)).status).toBe('mismatch');
  });

  it('transfer to an unknown account exits 1 with the service message and code', async () => {
    const run = await cli(['transfer', '--account', '1000000000', '--amount', '100', '--api', baseUrl]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('Transfer refused (404 not_found): No such account.');
    expect(run.stdout).toBe('');
  });

  it.each([
    ['--api', (port: number) => ({ args: ['--api', `http://127.0.0.1:${port}`], env: {} })],
    [
      'SERVICEPAY_API_URL',
      (port: number) => ({ args: [], env: { SERVICEPAY_API_URL: `http://127.0.0.1:${port}` } }),
    ],
    ['SERVICEPAY_PORT', (port: number) => ({ args: [], env: { SERVICEPAY_PORT: String(port) } })],
  ])(
    'transfer with nothing listening (from %s) says in one line which URL it tried and what to set',
    async (from, target) => {
      const port = await closedPort();
      const { args, env } = target(port);
      const run = await cli(['transfer', '--account', '1000000000', '--amount', '100', ...args], env);
      expect(run.code).toBe(1);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`http://127.0.0.1:${port}`);
      expect(lines[0]).toContain('ECONNREFUSED');
      expect(lines[0]).toContain(`from ${from}`);
      expect(lines[0]).toContain('SERVICEPAY_API_URL');
      expect(lines[0]).toContain('npm start');
      expect(run.stderr).not.toContain('    at '); // no stack trace
    },
  );

  it('start on a port in use says so in one line, naming the setting', async () => {
    const run = await cli([
      'start',
      '--db',
      dbPath,
      '--port',
      new URL(baseUrl).port,
      '--test-widget-port',
      '0',
      '--live-widget-port',
      '0',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `Port ${new URL(baseUrl).port} is in use (another server?): stop it, or set --port or SERVICEPAY_PORT.`,
    );
  });

  it.each([
    [
      "the API's pair, from the environment",
      [],
      { SERVICEPAY_HEADERS_TIMEOUT_MS: '40000', SERVICEPAY_REQUEST_TIMEOUT_MS: '30000' },
      'SERVICEPAY_HEADERS_TIMEOUT_MS (40000 ms) is longer than SERVICEPAY_REQUEST_TIMEOUT_MS (30000 ms): ',
    ],
    [
      "the widget hosts' pair, by flags",
      ['--widget-headers-timeout-ms', '12000', '--widget-request-timeout-ms', '11000'],
      {},
      '--widget-headers-timeout-ms (12000 ms) is longer than --widget-request-timeout-ms (11000 ms): ',
    ],
    [
      'a zero request timeout, from the environment',
      [],
      { SERVICEPAY_REQUEST_TIMEOUT_MS: '0' },
      'SERVICEPAY_REQUEST_TIMEOUT_MS must be a whole number of milliseconds, at least 1 (got 0)',
    ],
  ])(
    'start refuses a bad timeout (%s) before anything starts: exit 2, one line naming the setting, no stack, no database',
    async (_what, flags, env, reason) => {
      const freshFolder = mkdtempSync(join(tmpdir(), 'servicepay-cli-timeouts-'));
      const run = await cli(
        ['start', '--db', join(freshFolder, 'servicepay.db'), '--port', '0', ...flags],
        env,
      );
      expect(run.code).toBe(2);
      const [first, second] = run.stderr.split('\n');
      expect(first).toContain(reason);
      expect(first).toMatch(/^(--|SERVICEPAY_)/);
      expect(second).toBe(''); // then the usage text, as for every usage mistake
      expect(run.stderr).toContain('--headers-timeout-ms N');
      expect(run.stderr).not.toContain('    at ');
      expect(run.stderr).not.toContain('ERR_OUT_OF_RANGE');
      expect(run.stdout).toBe('');
      // Nothing was opened: no database file, no development secrets key.
      expect(readdirSync(freshFolder)).toEqual([]);
      rmSync(freshFolder, { recursive: true, force: true });
    },
  );

  it.each([
    ['no --name', ['business', 'create', '--db', '__DB__']],
    ['an unknown option', ['business', 'create', '--name', 'X', '--bogus', '--db', '__DB__']],
    ['an unknown command', ['frobnicate']],
    [
      'a bad environment',
      ['keys', 'roll', '--business', 'biz_x', '--environment', 'prod', '--kind', 'secret', '--db', '__DB__'],
    ],
    [
      'a bad kind',
      ['keys', 'roll', '--business', 'biz_x', '--environment', 'test', '--kind', 'root', '--db', '__DB__'],
    ],
    ['an unknown business', ['kyc', 'approve', '--business', 'biz_nope', '--db', '__DB__']],
    [
      'a bad amount',
      ['transfer', '--account', '1000000000', '--amount', '12.5', '--api', 'http://127.0.0.1:1'],
    ],
    ['a bad --api', ['transfer', '--account', '1000000000', '--amount', '100', '--api', 'localhost:4242']],
    ['a bad port', ['start', '--port', 'eighty', '--db', '__DB__']],
    ['a bad metrics port', ['start', '--metrics-port', 'ninety', '--db', '__DB__']],
    ['a bad log level', ['start', '--log-level', 'loud', '--db', '__DB__']],
  ])('bad usage (%s) exits 2 with the usage text', async (_what, args) => {
    const run = await cli(args.map((arg) => (arg === '__DB__' ? dbPath : arg)));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('servicepay-server business create --name NAME');
    expect(run.stdout).toBe('');
  });

  it('commands run at once on a new database file all succeed (the schema is made once)', async () => {
    const freshFolder = mkdtempSync(join(tmpdir(), 'servicepay-cli-fresh-'));
    const fresh = join(freshFolder, 'servicepay.db');
    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        cli(['business', 'create', '--name', `Shop ${i}`, '--db', fresh, '--json']),
      ),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const ids = runs.map((run) => CreatedBusinessSchema.parse(JSON.parse(run.stdout)).business.id);
    expect(new Set(ids).size).toBe(4);
    rmSync(freshFolder, { recursive: true, force: true });
  });

  it('stores no key in the clear: the database files do not contain a secret key', async () => {
    const created = await createBusiness();
    const rolled = RolledKeySchema.parse(
      JSON.parse(
        (
          await cli([
            'keys',
            'roll',
            '--business',
            created.business.id,
            '--environment',
            'live',
            '--kind',
            'secret',
            '--db',
            dbPath,
            '--json',
          ])
        ).stdout,
      ),
    );
    const session = await createSession(
      baseUrl,
      created.keys.test.secretKey,
      {},
      { 'idempotency-key': 'cli-clear' },
    );
    const files = readdirSync(folder).map((name) => readFileSync(join(folder, name)));
    expect(files.length).toBeGreaterThan(0);
    const secrets = [
      created.keys.test.secretKey,
      created.keys.test.publishableKey,
      created.keys.live.secretKey,
      rolled.key,
      session.clientSecret,
    ];
    for (const file of files) {
      for (const secret of secrets) {
        expect(file.includes(secret)).toBe(false);
        // Nor the 32 random characters on their own.
        expect(file.includes(secret.slice(-32))).toBe(false);
      }
    }
  });
});
