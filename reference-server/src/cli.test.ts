import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from './cli.ts';

// `main` in this process: its exit code and what it prints, without spawning the binary (test/cli/ does that).

const folder = mkdtempSync(join(tmpdir(), 'servicepay-cli-unit-'));
const dbPath = join(folder, 'servicepay.db');

/** Runs `main` and collects its stdout and stderr lines. */
async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void out.push(args.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void err.push(args.join(' ')));
  const code = await main(argv);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A real HTTP server that answers every request with `status` and `body`, standing in for a ServicePay API. */
let fake: Server;
let fakeUrl: string;
let answer: { status: number; body: string } = { status: 200, body: '{}' };

beforeAll(async () => {
  fake = createServer((_req, res) => {
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  fake.listen(0, '127.0.0.1');
  await once(fake, 'listening');
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => fake.close(resolve));
  rmSync(folder, { recursive: true, force: true });
});

/** The listeners' timeouts `start` reads from the environment. */
const TIMEOUT_VARIABLES = [
  'SERVICEPAY_HEADERS_TIMEOUT_MS',
  'SERVICEPAY_REQUEST_TIMEOUT_MS',
  'SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS',
  'SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS',
];

beforeEach(() => {
  vi.stubEnv('SERVICEPAY_API_URL', undefined);
  vi.stubEnv('SERVICEPAY_PORT', undefined);
  for (const name of TIMEOUT_VARIABLES) vi.stubEnv(name, undefined);
  return () => vi.unstubAllEnvs();
});

describe('main (in-process)', () => {
  it.each([
    ['no --name', ['business', 'create', '--db', dbPath], '--name is required'],
    ['an unknown option', ['business', 'create', '--name', 'X', '--bogus'], "Unknown option '--bogus'"],
    ['an unknown command', ['frobnicate'], 'unknown command "frobnicate"'],
    [
      'a bad environment',
      ['keys', 'roll', '--business', 'biz_x', '--environment', 'prod', '--kind', 'secret', '--db', dbPath],
      '--environment is test or live',
    ],
    [
      'a bad kind',
      ['keys', 'roll', '--business', 'biz_x', '--environment', 'test', '--kind', 'root', '--db', dbPath],
      '--kind is secret or publishable',
    ],
    [
      'an unknown business',
      ['kyc', 'approve', '--business', 'biz_nope', '--db', dbPath],
      'no business biz_nope',
    ],
    ['a bad amount', ['transfer', '--account', '1000000000', '--amount', '12.5'], '--amount is a positive'],
    ['a zero amount', ['transfer', '--account', '1000000000', '--amount', '0'], '--amount is a positive'],
    ['no --account', ['transfer', '--amount', '100'], '--account is required'],
    [
      'a bad --api',
      ['transfer', '--account', '1', '--amount', '1', '--api', 'ftp://x'],
      '--api must be an http(s) URL',
    ],
    ['a bad port', ['start', '--port', 'eighty', '--db', dbPath], '--port must be a port number'],
    [
      'a bad schedule',
      ['start', '--webhook-schedule', 'slow', '--db', dbPath],
      '--webhook-schedule is fast or standard',
    ],
    ['a bad --limit', ['audit', 'list', '--limit', '0', '--db', dbPath], '--limit is a whole number'],
    [
      'a header timeout longer than the default request timeout',
      ['start', '--headers-timeout-ms', '40000', '--db', dbPath],
      "--headers-timeout-ms (40000 ms) is longer than the default of --request-timeout-ms or SERVICEPAY_REQUEST_TIMEOUT_MS (30000 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    ],
    [
      "the widget hosts' pair, both by flag",
      ['start', '--widget-headers-timeout-ms', '8000', '--widget-request-timeout-ms', '5000', '--db', dbPath],
      '--widget-headers-timeout-ms (8000 ms) is longer than --widget-request-timeout-ms (5000 ms): ',
    ],
    [
      'a zero timeout',
      ['start', '--widget-request-timeout-ms', '0', '--db', dbPath],
      '--widget-request-timeout-ms must be a whole number of milliseconds, at least 1 (got 0)',
    ],
    [
      'a timeout with a unit',
      ['start', '--request-timeout-ms', '30s', '--db', dbPath],
      '--request-timeout-ms must be a whole number of milliseconds, at least 1 (got "30s")',
    ],
    [
      'a negative timeout',
      ['start', '--headers-timeout-ms=-5', '--db', dbPath],
      '--headers-timeout-ms must be a whole number of milliseconds, at least 1 (got "-5")',
    ],
    [
      'a fractional timeout',
      ['start', '--widget-headers-timeout-ms', '2500.5', '--db', dbPath],
      '--widget-headers-timeout-ms must be a whole number of milliseconds, at least 1 (got "2500.5")',
    ],
    [
      'a missing database',
      ['credits', 'list', '--db', join(folder, 'typo.db')],
      `no database at ${join(folder, 'typo.db')}`,
    ],
  ])(
    'bad usage (%s) answers 2 with the reason and the usage text, and prints nothing on stdout',
    async (_what, argv, reason) => {
      const result = await run(argv);
      expect(result.code).toBe(2);
      expect(result.stderr.split('\n')[0]).toContain(reason);
      expect(result.stderr).toContain('servicepay-server business create --name NAME');
      expect(result.stdout).toBe('');
    },
  );

  it('a bad SERVICEPAY_API_URL is a usage error naming the variable', async () => {
    vi.stubEnv('SERVICEPAY_API_URL', 'not a url');
    const result = await run(['transfer', '--account', '1000000000', '--amount', '100']);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'SERVICEPAY_API_URL must be an http(s) URL such as http://127.0.0.1:4242',
    );
  });

  it('start names the environment variable a bad timeout came from; a flag given beside it wins', async () => {
    vi.stubEnv('SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS', '20000');
    const fromVariable = await run(['start', '--db', dbPath]);
    expect(fromVariable.code).toBe(2);
    expect(fromVariable.stderr.split('\n')[0]).toBe(
      "SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS (20000 ms) is longer than the default of --widget-request-timeout-ms or SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS (15000 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    );
    // The flag's value replaces the variable's, which is then not checked: here the request timeout is bad.
    vi.stubEnv('SERVICEPAY_WIDGET_REQUEST_TIMEOUT_MS', '30000');
    const fromFlag = await run(['start', '--widget-request-timeout-ms', '19999', '--db', dbPath]);
    expect(fromFlag.code).toBe(2);
    expect(fromFlag.stderr.split('\n')[0]).toBe(
      "SERVICEPAY_WIDGET_HEADERS_TIMEOUT_MS (20000 ms) is longer than --widget-request-timeout-ms (19999 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    );
    expect(fromFlag.stdout).toBe('');
  });

  it('--help and no command print the usage and answer 0', async () => {
    for (const argv of [['--help'], []]) {
      const result = await run(argv);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('servicepay-server transfer --account NUMBER --amount MINOR_UNITS');
      expect(result.stdout).toContain('SERVICEPAY_API_URL');
      expect(result.stderr).toBe('');
    }
  });

  it('transfer prints the refusal as status, code and message, answering 1', async () => {
    answer = {
      status: 403,
      body: JSON.stringify({
        meta: {
          statusCode: 403,
          code: 'test_mode_only',
          message: 'The simulated bank moves money only for test accounts.',
          requestId: 'req_1',
        },
      }),
    };
    const result = await run(['transfer', '--account', '1000000000', '--amount', '100', '--api', fakeUrl]);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Transfer refused (403 test_mode_only): The simulated bank moves money only for test accounts.',
    });
  });

  it('transfer says so when the URL answers but is not the ServicePay API', async () => {
    answer = { status: 404, body: '<html>Not found</html>' };
    vi.stubEnv('SERVICEPAY_API_URL', fakeUrl);
    const result = await run(['transfer', '--account', '1000000000', '--amount', '100']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `${fakeUrl} answered 404 without a ServicePay envelope: is it the ServicePay API? Set --api URL or SERVICEPAY_API_URL.`,
    );
  });

  it('transfer prints the bank outcome on success, answering 0', async () => {
    const transfer = { id: 'trf_1', accountNumber: '1000000000', amount: 100, outcome: 'credited' };
    answer = {
      status: 200,
      body: JSON.stringify({ meta: { statusCode: 200, message: 'OK' }, data: transfer }),
    };
    vi.stubEnv('SERVICEPAY_PORT', new URL(fakeUrl).port);
    const result = await run(['transfer', '--account', '1000000000', '--amount', '100']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(transfer);
  });
});
