import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Writes } from '../../reference-server/src/db/repositories.ts';
import { STORAGE_FULL_RETRY_AFTER_SECONDS } from '../../reference-server/src/errors.ts';
import { call, createSession } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import {
  expectStorageFull,
  type FullDiskServer,
  healthyAgain,
  startServerOnSmallDisk,
} from '../support/full-disk-server.ts';
import { PortalClient } from '../support/portal-client.ts';
import type { RunningServer } from '../support/server.ts';
import { smallDiskAvailable } from '../support/small-disk.ts';

// What a full disk does to the SQLite store alone (test/api/storage-full.test.ts runs the rest on both stores;
// when no tmpfs can be mounted here, that file says so in one line). On SQLite every commit appends to the WAL,
// so any write meets ENOSPC at once; PostgreSQL refuses a write only when it must extend a file, so the few
// rows one route writes often still fit in pages it has, and a disk cannot be made to fail one chosen write.

describe.runIf(smallDiskAvailable)('with the SQLite file on a real disk (tmpfs) filled to ENOSPC', () => {
  let full: FullDiskServer;
  let server: RunningServer;
  let secretKey: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    full = await startServerOnSmallDisk(64, { databaseUrl: null, rateLimit: { perMinute: 100_000 } });
    server = full.server;
    secretKey = (await server.createBusiness()).keys.test.secretKey;
    receiver = await startReceiver();
  });

  afterEach(async () => {
    full.disk.free();
    await healthyAgain(server);
  });

  afterAll(async () => {
    await receiver?.close();
    await full?.close();
  });

  it('answers the retry of a request whose disk filled between its Idempotency-Key mark and its write, once space is back', async () => {
    const store = server.service.deps.store;
    const writes = store.writes;
    // The disk fills the moment the key's pending mark has committed, before the route's own write: the
    // route's write and the write that would forget the mark both fail.
    let fillAfterNextCommit = true;
    const filling: Writes = {
      run: (work) =>
        writes.run(work).then((value) => {
          if (fillAfterNextCommit) {
            fillAfterNextCommit = false;
            full.disk.fill();
          }
          return value;
        }),
    };
    store.writes = filling;
    const register = () =>
      call(server.baseUrl, 'POST', '/api/webhooks', {
        token: secretKey,
        json: { url: `${receiver.url}/cut` },
        headers: { 'idempotency-key': 'cut-webhook' },
      });
    try {
      expectStorageFull(await register());
    } finally {
      store.writes = writes;
    }
    full.disk.free();
    await healthyAgain(server);
    const registered = await register();
    expect(registered.status, registered.text).toBe(201);
    expect(registered.body.data.url).toBe(`${receiver.url}/cut`);
    const replayed = await register();
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.id).toBe(registered.body.data.id);
  });

  it('answers a portal form that must write 503 with Retry-After, as a page, and the same form once there is space', async () => {
    expect((await new PortalClient(server.baseUrl).signIn(secretKey)).status).toBe(303);
    full.disk.fill();
    // Signing in stores a portal session.
    const refused = await new PortalClient(server.baseUrl).signIn(secretKey);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe(String(STORAGE_FULL_RETRY_AFTER_SECONDS));
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(refused.text).toContain('disk is full');
    full.disk.free();
    await healthyAgain(server);
    expect((await new PortalClient(server.baseUrl).signIn(secretKey)).status).toBe(303);
  });

  it('keeps checkpointing on its thread after the disk was full: the WAL checkpointer survives', async () => {
    const { db, config } = server.service;
    // Past the 64 commits after which the thread starts, one commit each.
    for (let i = 0; i < 70; i++) await createSession(server.baseUrl, secretKey, { reference: `before-${i}` });
    full.disk.fill();
    // Once the thread has copied the WAL into the file, the next write starts the WAL again from its
    // beginning, in the space the file already has: writes go on until that space is used up, then fail.
    const create = () =>
      call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: secretKey,
        json: { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
      });
    let answer = await create();
    for (let i = 0; i < 1_000 && answer.status === 201; i++) answer = await create();
    expectStorageFull(answer);
    expectStorageFull(await create());
    full.disk.free();
    await healthyAgain(server);
    const fileBefore = statSync(config.dbPath).size;
    for (let i = 0; i < 70; i++) await createSession(server.baseUrl, secretKey, { reference: `after-${i}` });
    // Still the thread's job (it did not fail and hand checkpoints back to SQLite), and it still copies the
    // WAL into the file while the service runs.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    for (let i = 0; i < 100 && statSync(config.dbPath).size <= fileBefore; i++) await sleep(20);
    expect(statSync(config.dbPath).size).toBeGreaterThan(fileBefore);
    const [row] = await server.rows<{ n: number }>(
      "SELECT count(*) AS n FROM sessions WHERE reference LIKE 'before-%' OR reference LIKE 'after-%'",
    );
    expect(row?.n).toBe(140);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
