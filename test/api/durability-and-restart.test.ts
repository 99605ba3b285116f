import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../reference-server/src/index.ts';
import { bootstrap, call, createSession, eventTypes, expectError, retrieveSession } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

const folders: string[] = [];
const servers: RunningServer[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function tempDbPath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-restart-'));
  folders.push(folder);
  return join(folder, 'servicepay.db');
}

async function start(...args: Parameters<typeof startServer>): Promise<RunningServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}

async function stop(server: RunningServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

describe('expiry across a restart', () => {
  it('a session that fell due while the service was down is expired right after start', async () => {
    const dbPath = tempDbPath();
    const clock = new ManualClock(Date.parse('2030-06-01T08:00:00Z'));
    const first = await start({}, { clock, dbPath });
    const shop = await first.createBusiness({ name: 'Restart' });
    const key = shop.keys.test.secretKey;
    const due = await createSession(first.baseUrl, key);
    const opened = await bootstrap(first.baseUrl, due.clientSecret);
    const neverOpened = await createSession(first.baseUrl, key);
    const longLived = await createSession(first.baseUrl, key, { expiresInMinutes: 1440 });
    await stop(first);

    clock.advance(120 * 60_000 + 1);
    const second = await start({ sweepIntervalMs: 3_600_000 }, { clock, dbPath });
    // No sweep was called by the test: start() itself settled what was overdue.
    const expired = await retrieveSession(second.baseUrl, key, due.id);
    expect(expired.status).toBe('expired');
    expect(await eventTypes(second, due.id)).toEqual(['session.awaiting_payment', 'session.expired']);
    expect((await retrieveSession(second.baseUrl, key, neverOpened.id)).status).toBe('expired');
    expect((await retrieveSession(second.baseUrl, key, longLived.id)).status).toBe('pending');

    expectError(
      await call(second.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: neverOpened.clientSecret },
      }),
      410,
      'client_secret_expired',
    );
    expectError(
      await call(second.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: due.clientSecret },
      }),
      409,
      'client_secret_already_used',
    );
    // The old account takes no money: the bank returns it and the session stays expired.
    const transfer = await call(second.baseUrl, 'POST', '/api/test/transfers', {
      token: key,
      json: { accountNumber: opened.virtualAccount.accountNumber, amount: due.amount },
    });
    expect(transfer.status).toBe(200);
    expect(transfer.body.data.outcome).toBe('returned');
    expect((await retrieveSession(second.baseUrl, key, due.id)).status).toBe('expired');
    // The widget token lived as long as its session: past that it opens nothing (issue 8).
    expectError(
      await call(second.baseUrl, 'POST', `/api/widget/sessions/${due.id}/accounts`, { token: opened.token }),
      401,
      'widget_token_expired',
    );
  });

  it('keys, sessions and the idempotency record survive a restart', async () => {
    const dbPath = tempDbPath();
    const first = await start({}, { dbPath });
    const key = (await first.createBusiness()).keys.test.secretKey;
    const headers = { 'idempotency-key': 'restart-key' };
    const created = await createSession(first.baseUrl, key, { reference: 'before-restart' }, headers);
    await stop(first);
    const second = await start({}, { dbPath });
    const replay = await call(second.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      json: {
        amount: 500_000,
        currency: 'NGN',
        payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
        reference: 'before-restart',
      },
      headers,
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.clientSecret).toBe(created.clientSecret);
  });

  it('a client secret made before a restart opens its checkout after it, once', async () => {
    const dbPath = tempDbPath();
    const first = await start({}, { dbPath });
    const key = (await first.createBusiness()).keys.test.secretKey;
    const created = await createSession(first.baseUrl, key, { reference: 'opened-after-restart' });
    await stop(first);
    const second = await start({}, { dbPath });
    const opened = await bootstrap(second.baseUrl, created.clientSecret);
    expect(opened.session).toMatchObject({
      id: created.id,
      status: 'awaiting_payment',
      amount: created.amount,
    });
    expectError(
      await call(second.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: created.clientSecret },
      }),
      409,
      'client_secret_already_used',
    );
  });
});

describe('durability', () => {
  it('a created session is committed in the store as soon as the 201 arrives: another connection reads it', async () => {
    const server = await start();
    const key = (await server.createBusiness()).keys.test.secretKey;
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createSession(server.baseUrl, key, { reference: `durable-${i}` })),
    );
    // A read-only connection of its own on the SQLite file, another pool on PostgreSQL: committed rows only.
    const rows = await server.committedRows(
      `SELECT id, status, amount FROM sessions WHERE id IN (${created.map(() => '?').join(',')})`,
      ...created.map((session) => session.id),
    );
    expect(rows).toHaveLength(20);
    expect(rows).toContainEqual({ id: created[0]?.id, status: 'pending', amount: 500_000 });
  });
});
