import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreatedBusinessSchema, UnappliedCreditSchema } from '@servicepay/node/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { silentLogger } from '../../reference-server/src/index.ts';
import {
  bankNotification,
  bootstrap,
  call,
  createSession,
  paySession,
  postNotification,
} from '../support/api.ts';
import { startServer } from '../support/server.ts';

// The operator's commands after an incident, as real processes on real SQLite files: unapplied credits, the
// audit log, and production mode refusing a secrets key kept beside the database.

const BIN = fileURLToPath(new URL('../../reference-server/bin/servicepay-server.js', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'servicepay-money-cli-'));

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

type Run = { code: number | null; stdout: string; stderr: string };

/** The environment of a deployed process: no secrets key unless the test gives one. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of ['SERVICEPAY_SECRETS_KEY', 'SERVICEPAY_SECRETS_KEY_FILE', 'SERVICEPAY_DB']) {
    if (!(name in extra)) delete env[name];
  }
  if (!('NODE_ENV' in extra)) delete env.NODE_ENV;
  return env;
}

function cli(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { timeout: 30_000, env: environment(extraEnv) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Starts `servicepay-server start`, resolves once it says it listens, then stops it with SIGTERM. */
function startsAndStops(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [BIN, 'start', '--port', '0', '--test-widget-port', '0', '--live-widget-port', '0', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], env: environment(extraEnv) },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/listening on http/.test(out)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) => {
      if (/listening on http/.test(out)) resolve(out);
      else reject(new Error(`server exited with ${code}: ${out}`));
    });
  });
}

const me = (() => {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
})();

describe('servicepay-server audit list', () => {
  it('shows key rolls and KYC approvals made with the CLI, by whom, filtered by business', async () => {
    const dbPath = join(folder, 'audit.db');
    const create = async () => {
      const run = await cli(['business', 'create', '--name', 'Audit CLI Shop', '--db', dbPath, '--json']);
      expect(run.code, run.stderr).toBe(0);
      return CreatedBusinessSchema.parse(JSON.parse(run.stdout));
    };
    const [business, other] = await Promise.all([create(), create()]);
    const id = business.business.id;
    const roll = await cli([
      'keys',
      'roll',
      '--business',
      id,
      '--environment',
      'test',
      '--kind',
      'secret',
      '--db',
      dbPath,
      '--json',
    ]);
    expect(roll.code, roll.stderr).toBe(0);
    const newKey: string = JSON.parse(roll.stdout).key;
    const approve = await cli(['kyc', 'approve', '--business', id, '--db', dbPath]);
    expect(approve.code, approve.stderr).toBe(0);
    // Another business's approval, written by a concurrent process, stays out of this business's list.
    expect((await cli(['kyc', 'approve', '--business', other.business.id, '--db', dbPath])).code).toBe(0);

    const listed = await cli(['audit', 'list', '--business', id, '--db', dbPath, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout);
    expect(entries).toEqual([
      {
        id: expect.stringMatching(/^aud_/),
        at: expect.any(String),
        actor: `cli:${me}`,
        action: 'api_key.rolled',
        businessId: id,
        environment: 'test',
        target: `sk_test_…${newKey.slice(-4)}`,
        details: { kind: 'secret', revoked: `sk_test_…${business.keys.test.secretKey.slice(-4)}` },
      },
      {
        id: expect.stringMatching(/^aud_/),
        at: expect.any(String),
        actor: `cli:${me}`,
        action: 'kyc.approved',
        businessId: id,
        environment: 'live',
        target: id,
        details: {},
      },
    ]);
    expect(listed.stdout).not.toContain(newKey);

    const [everyone, human, empty, badLimit] = await Promise.all([
      cli(['audit', 'list', '--db', dbPath, '--json']),
      cli(['audit', 'list', '--business', id, '--db', dbPath]),
      cli(['audit', 'list', '--business', 'biz_nobody', '--db', dbPath]),
      cli(['audit', 'list', '--limit', 'lots', '--db', dbPath]),
    ]);
    expect(JSON.parse(everyone.stdout)).toHaveLength(3);
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split('\n')).toHaveLength(2);
    expect(human.stdout).toContain('api_key.rolled');
    expect(human.stdout).toContain(`cli:${me}`);
    expect(empty.stdout.trim()).toBe('No audit entries.');
    expect(badLimit.code).toBe(2);
    // A mistyped path is an error, not an empty list from a database created on the spot.
    const typo = join(folder, 'audit-typo.db');
    const missing = await cli(['audit', 'list', '--db', typo]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`no database at ${typo}`);
    expect(existsSync(typo)).toBe(false);
  }, 120_000);
});

describe('servicepay-server credits list', () => {
  it('lists the credits no session could take, with their refunds, for one business or all', async () => {
    const dbPath = join(folder, 'credits.db');
    const server = await startServer({}, { dbPath });
    let businessId: string;
    let transferId: string;
    let sessionId: string;
    try {
      const created = await server.createBusiness({ name: 'Credits Shop' });
      businessId = created.business.id;
      const session = await createSession(server.baseUrl, created.keys.test.secretKey, { amount: 64_000 });
      sessionId = session.id;
      const opened = await bootstrap(server.baseUrl, session.clientSecret);
      const bank = new SimulatedBank({
        books: server.bankBooks,
        clock: { now: () => Date.now() },
        logger: silentLogger,
        secret: server.service.config.bank.secret,
        bankName: 'ServicePay Test Bank',
        notificationUrl: () => undefined,
      });
      const transfer = await bank.transfer(opened.virtualAccount.accountNumber, 64_000);
      transferId = transfer.id;
      const wrong = bankNotification(opened.virtualAccount.accountNumber, 64_000, { currency: 'USD' });
      wrong.transfer.id = transfer.id;
      expect((await postNotification(server, wrong)).body.data.result).toBe('unapplied');
    } finally {
      await server.close();
    }

    const listed = await cli(['credits', 'list', '--db', dbPath, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout);
    expect(rows).toHaveLength(1);
    expect(UnappliedCreditSchema.parse(rows[0])).toMatchObject({
      transferId,
      amount: 64_000,
      // What the bank's notification said: the currency that could not pay an NGN session.
      currency: 'USD',
      reason: 'currency_mismatch',
      refundStatus: 'refunded',
      refundId: expect.stringMatching(/^rfd_/),
    });
    expect(rows[0]).toMatchObject({ businessId, sessionId, environment: 'test' });

    const mine = JSON.parse(
      (await cli(['credits', 'list', '--business', businessId, '--db', dbPath, '--json'])).stdout,
    );
    expect(mine).toEqual(rows);
    const others = JSON.parse(
      (await cli(['credits', 'list', '--business', 'biz_other', '--db', dbPath, '--json'])).stdout,
    );
    expect(others).toEqual([]);
    const human = await cli(['credits', 'list', '--db', dbPath]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('64000 USD');
    expect(human.stdout).toContain('currency_mismatch');
    expect(human.stdout).toContain('refunded');
  }, 120_000);
});

describe('production mode and the secrets key', () => {
  it('refuses to start with the key file beside the database, in one line, before touching the database', async () => {
    const data = join(folder, 'prod-a');
    const dbPath = join(data, 'servicepay.db');
    for (const [args, env] of [
      [['--production'], {}],
      [[], { NODE_ENV: 'production' }],
    ] as const) {
      const run = await cli(['start', '--db', dbPath, '--port', '0', ...args], env);
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain('SERVICEPAY_SECRETS_KEY');
      expect(run.stdout).toBe('');
    }
    expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
  }, 120_000);

  it('refuses a key file inside the database folder, and a missing one, naming the file', async () => {
    const data = join(folder, 'prod-b');
    mkdirSync(join(data, 'keys'), { recursive: true });
    const inside = join(data, 'keys', 'servicepay.key');
    writeFileSync(inside, randomBytes(32).toString('base64'), { mode: 0o600 });
    const dbPath = join(data, 'servicepay.db');
    const beside = await cli(['start', '--production', '--db', dbPath, '--secrets-key-file', inside]);
    expect(beside.code).toBe(1);
    expect(beside.stderr.trim().split('\n')).toHaveLength(1);
    expect(beside.stderr).toContain('inside the database folder');

    const missing = join(folder, 'nowhere', 'servicepay.key');
    const absent = await cli(['start', '--production', '--db', dbPath], {
      SERVICEPAY_SECRETS_KEY_FILE: missing,
    });
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain(missing);
    expect(existsSync(missing)).toBe(false);
  }, 120_000);

  it('starts with a key file outside the database folder, or with SERVICEPAY_SECRETS_KEY', async () => {
    const keys = join(folder, 'prod-keys');
    mkdirSync(keys);
    const keyFile = join(keys, 'servicepay.key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    const data = join(folder, 'prod-c');
    const dbPath = join(data, 'servicepay.db');
    await startsAndStops(['--production', '--db', dbPath, '--secrets-key-file', keyFile]);
    await startsAndStops(['--db', dbPath], {
      NODE_ENV: 'production',
      SERVICEPAY_SECRETS_KEY: randomBytes(32).toString('base64'),
    });
    expect(readdirSync(data).some((name) => name.includes('secrets-key'))).toBe(false);
  }, 120_000);

  it('in development keeps making the key file beside the database, as npm start expects', async () => {
    const data = join(folder, 'dev');
    await startsAndStops(['--db', join(data, 'servicepay.db')]);
    expect(readdirSync(data)).toContain('servicepay.secrets-key');
  }, 120_000);
});

describe('servicepay-server refunds list', () => {
  it("shows merchants' refunds, newest first, with who asked and how each ended, by session or business", async () => {
    const dbPath = join(folder, 'refunds.db');
    const server = await startServer({}, { dbPath });
    let sessionId: string;
    let businessId: string;
    const made: string[] = [];
    try {
      const created = await server.createBusiness({ name: 'Refund CLI Shop' });
      businessId = created.business.id;
      const key = created.keys.test.secretKey;
      const paid = await paySession(server.baseUrl, key, { amount: 30_000 });
      sessionId = paid.id;
      for (const amount of [10_000, 5_000]) {
        const answer = await call(server.baseUrl, 'POST', `/api/widget/sessions/${paid.id}/refunds`, {
          token: key,
          json: { amount },
        });
        expect(answer.status, answer.text).toBe(201);
        made.push(answer.body.data.id);
      }
    } finally {
      await server.close();
    }
    const listed = await cli(['refunds', 'list', '--session', sessionId, '--db', dbPath, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout);
    expect(rows.map((row: { id: string }) => row.id)).toEqual([...made].reverse());
    expect(rows[0]).toMatchObject({
      sessionId,
      businessId,
      environment: 'test',
      amount: 5_000,
      currency: 'NGN',
      status: 'succeeded',
      requestedBy: 'secret_key:test',
      transferId: expect.stringMatching(/^trf_/),
    });
    const text = await cli(['refunds', 'list', '--business', businessId, '--db', dbPath]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trim().split('\n')).toHaveLength(2);
    expect(text.stdout).toContain(`${made[0]}  10000 NGN  succeeded  session ${sessionId}`);
    const none = await cli(['refunds', 'list', '--business', 'biz_none', '--db', dbPath]);
    expect(none.stdout.trim()).toBe('No refunds.');
  });
});
