import type { CreatedBusiness } from '@servicepay/node/protocol';
import { listEnvelopeOf, SessionSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Repositories, WriteOptions } from '../../reference-server/src/db/repositories.ts';
import type { Store } from '../../reference-server/src/db/store.ts';
import { ManualClock } from '../../reference-server/src/index.ts';
import { randomBase62, sha256 } from '../../reference-server/src/internal/random.ts';
import { bootstrap, call, createSession, expectError, sessionParams } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

let server: RunningServer;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-03-01T09:00:00Z'));
  server = await startServer({ rateLimit: { perMinute: 10_000 } }, { clock });
});

afterAll(async () => {
  await server.close();
});

const ListEnvelope = listEnvelopeOf(SessionSchema);

const createWithKey = (token: string, idempotencyKey: string, body: unknown) =>
  call(server.baseUrl, 'POST', '/api/widget/sessions', {
    token,
    json: body,
    headers: { 'idempotency-key': idempotencyKey },
  });

async function sessionsOf(token: string) {
  const response = await call(server.baseUrl, 'GET', '/api/widget/sessions?limit=100', { token });
  return ListEnvelope.parse(response.body).data;
}

describe('Idempotency-Key', () => {
  let shop: CreatedBusiness;
  beforeAll(async () => {
    shop = await server.createBusiness({ name: 'Idempotent' });
  });

  it('replays the first response for the same key and body, creating one session', async () => {
    const token = shop.keys.test.secretKey;
    const body = sessionParams({ reference: 'idem-1', metadata: { cart: '7' } });
    const first = await createWithKey(token, 'key-1', body);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await createWithKey(token, 'key-1', body);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.body.data.clientSecret).toBe(first.body.data.clientSecret);
    const listed = await sessionsOf(token);
    expect(listed.filter((session) => session.reference === 'idem-1').map((session) => session.id)).toEqual([
      first.body.data.id,
    ]);
  });

  it('refuses the same key with another body (409) and creates nothing', async () => {
    const token = shop.keys.test.secretKey;
    const before = (await sessionsOf(token)).length;
    expect((await createWithKey(token, 'key-2', sessionParams({ amount: 1000 }))).status).toBe(201);
    const reused = await createWithKey(token, 'key-2', sessionParams({ amount: 2000 }));
    expectError(reused, 409, 'idempotency_key_reused');
    expect((await sessionsOf(token)).length).toBe(before + 1);
  });

  it('makes one session of many concurrent identical requests', async () => {
    const shop2 = await server.createBusiness({ name: 'Concurrent' });
    const token = shop2.keys.test.secretKey;
    const body = sessionParams({ reference: 'concurrent-1' });
    const responses = await Promise.all(
      Array.from({ length: 25 }, () => createWithKey(token, 'same-key', body)),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(25).fill(201));
    const ids = new Set(responses.map((response) => response.body.data.id));
    const secrets = new Set(responses.map((response) => response.body.data.clientSecret));
    expect(ids.size).toBe(1);
    expect(secrets.size).toBe(1);
    expect(responses.filter((response) => response.headers.get('idempotent-replayed') === null)).toHaveLength(
      1,
    );
    expect((await sessionsOf(token)).map((session) => session.id)).toEqual([...ids]);
  });

  it('scopes keys per business (and environment)', async () => {
    const a = await server.createBusiness({ name: 'Scope A', kycApproved: true });
    const b = await server.createBusiness({ name: 'Scope B' });
    const fromA = await createWithKey(a.keys.test.secretKey, 'shared-key', sessionParams());
    const fromB = await createWithKey(b.keys.test.secretKey, 'shared-key', sessionParams());
    const fromALive = await createWithKey(a.keys.live.secretKey, 'shared-key', sessionParams());
    expect([fromA.status, fromB.status, fromALive.status]).toEqual([201, 201, 201]);
    expect(fromB.headers.get('idempotent-replayed')).toBeNull();
    expect(fromALive.headers.get('idempotent-replayed')).toBeNull();
    expect(new Set([fromA.body.data.id, fromB.body.data.id, fromALive.body.data.id]).size).toBe(3);
    expect(fromALive.body.data.environment).toBe('live');
  });

  it('does not remember a refused request: the key can be used once the body is right', async () => {
    const token = shop.keys.test.secretKey;
    expectError(
      await createWithKey(token, 'key-3', sessionParams({ currency: 'EUR' })),
      400,
      'unsupported_currency',
    );
    expectError(
      await createWithKey(token, 'key-3', sessionParams({ reference: 'idem-1' })),
      409,
      'reference_already_used',
    );
    const good = await createWithKey(token, 'key-3', sessionParams({ reference: 'idem-3' }));
    expect(good.status, good.text).toBe(201);
  });

  it.each([
    ['empty', ''],
    ['a space inside', 'a b'],
    ['256 characters', 'k'.repeat(256)],
    ['Latin-1, not ASCII', 'cl\u00e9'],
  ])('refuses an Idempotency-Key that is %s', async (_what, idempotencyKey) => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: shop.keys.test.secretKey,
      json: sessionParams(),
      headers: { 'idempotency-key': idempotencyKey },
    });
    const body = expectError(response, 400, 'validation_failed');
    expect(body.errors?.map((error) => error.path)).toEqual(['Idempotency-Key']);
  });

  it('keeps the remembered response encrypted: the client secret is not in the database file in clear', async () => {
    const token = shop.keys.test.secretKey;
    const created = await createWithKey(token, 'key-4', sessionParams());
    const rows = await server.rows("SELECT * FROM idempotent_requests WHERE idempotency_key = 'key-4'");
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(created.body.data.clientSecret);
  });
});

/**
 * Records every `claim` and `remember` of an idempotency key (and the session create's claim, made with the
 * session by `sessions.insertAnswered`), whether made through a write job's repositories
 * (`tx`) or through the store's own, on either store: on SQLite a job's repositories are the store's objects,
 * on PostgreSQL each job gets its own, bound to its transaction. Returns what stops the recording.
 */
function recordKeyWrites(store: Store, calls: string[]): () => void {
  type Keys = Repositories['idempotencyKeys'];
  const keys = store.idempotencyKeys;
  const { claim, remember } = keys;
  const { writes } = store;
  const original = writes.run;
  const run = original.bind(writes);
  const recorded = (target: Keys, where: string): Pick<Keys, 'claim' | 'remember'> => {
    const original =
      target === keys ? { claim, remember } : { claim: target.claim, remember: target.remember };
    return {
      claim: (...args) => {
        calls.push(`claim:${args[1].statusCode} ${where}`);
        return original.claim.apply(target, args);
      },
      remember: (...args) => {
        calls.push(`remember:${args[1].statusCode} ${where}`);
        return original.remember.apply(target, args);
      },
    };
  };
  Object.assign(keys, recorded(keys, 'outside a write job'));
  writes.run = <T>(job: Parameters<typeof run<T>>[0], options?: WriteOptions): Promise<T> =>
    run<T>((tx, context) => {
      const jobKeys = Object.assign(
        Object.create(tx.idempotencyKeys),
        recorded(tx.idempotencyKeys, 'in a write job'),
      );
      // The session create claims its key with the session (`insertAnswered`), in one statement on PostgreSQL.
      const jobSessions = Object.assign(Object.create(tx.sessions), {
        insertAnswered: (...args: Parameters<typeof tx.sessions.insertAnswered>) => {
          calls.push(`claim:${args[1].response.statusCode} with the session in a write job`);
          return tx.sessions.insertAnswered(...args);
        },
      });
      return job({ ...tx, idempotencyKeys: jobKeys, sessions: jobSessions }, context);
    }, options);
  return () => {
    Object.assign(keys, { claim, remember });
    writes.run = original;
  };
}

describe('Idempotency-Key on session create: the key commits with the session', () => {
  // docs/decisions/idempotency.md: session create remembers its answer in the session's own write job.
  it('writes no pending mark: one claim, in the same job, and the answer is there as soon as the 201 is', async () => {
    const token = (await server.createBusiness({ name: 'One Commit' })).keys.test.secretKey;
    const calls: string[] = [];
    const stopRecording = recordKeyWrites(server.service.deps.store, calls);
    try {
      const created = await createWithKey(token, 'one-commit', sessionParams({ reference: 'one-commit' }));
      expect(created.status, created.text).toBe(201);
      // One claim carrying the answer, written with the session through a write job's own repositories: no
      // pending mark first.
      expect(calls).toEqual(['claim:201 with the session in a write job']);
      const rows = await server.rows<{ status_code: number }>(
        "SELECT status_code FROM idempotent_requests WHERE idempotency_key = 'one-commit'",
      );
      expect(rows).toEqual([{ status_code: 201 }]);
      const replay = await createWithKey(token, 'one-commit', sessionParams({ reference: 'one-commit' }));
      expect(replay.text).toBe(created.text);
    } finally {
      stopRecording();
    }
  });

  it('looks a key up only when the create fails: a first use reads nothing of it; a retry, a bad body or a taken reference are answered from it', async () => {
    const shop = await server.createBusiness({ name: 'No Lookup' });
    const token = shop.keys.test.secretKey;
    const lookups = vi.spyOn(server.service.deps.store.idempotencyKeys, 'find');
    try {
      const body = sessionParams({ reference: 'no-lookup' });
      const first = await createWithKey(token, 'no-lookup', body);
      expect(first.status, first.text).toBe(201);
      expect(lookups).not.toHaveBeenCalled();
      // The retry's job fails (its reference is the first's): the key is looked up, the first answer replayed.
      const retry = await createWithKey(token, 'no-lookup', body);
      expect(retry.text).toBe(first.text);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(lookups).toHaveBeenCalledTimes(1);
      // A body that no longer validates, under a used key: 409 for the key, as before the body was read.
      expectError(await createWithKey(token, 'no-lookup', { amount: -1 }), 409, 'idempotency_key_reused');
      // Without a reference the retry's insert succeeds and its claim fails: rolled back, replayed.
      const unreferenced = sessionParams();
      const made = await createWithKey(token, 'no-lookup-2', unreferenced);
      expect((await createWithKey(token, 'no-lookup-2', unreferenced)).text).toBe(made.text);
      expect((await sessionsOf(token)).map((session) => session.reference)).toHaveLength(2);
    } finally {
      lookups.mockRestore();
    }
  });

  it('a key another process took after the lookup (simulated) answers 409 and makes no session', async () => {
    const shop = await server.createBusiness({ name: 'Raced' });
    const token = shop.keys.test.secretKey;
    const store = server.service.deps.store;
    // What a second process on the same file leaves: a live pending mark for the key. The lookup is made to
    // miss it once, as if the mark was written between this process's lookup and its write job.
    await server.rows(
      'INSERT INTO idempotent_requests (scope, idempotency_key, request_hash, status_code, response_body, created_at) VALUES (?, ?, ?, 0, ?, ?)',
      `${shop.business.id}:test`,
      'raced',
      Buffer.alloc(32),
      '',
      clock.now(),
    );
    const { find } = store.idempotencyKeys;
    store.idempotencyKeys.find = async () => {
      store.idempotencyKeys.find = find;
      return undefined;
    };
    const raced = await createWithKey(token, 'raced', sessionParams({ reference: 'raced-1' }));
    expectError(raced, 409, 'idempotency_key_reused');
    expect(store.idempotencyKeys.find).toBe(find);
    expect(
      await store.sessions.list({
        businessId: shop.business.id,
        environment: 'test',
        reference: 'raced-1',
        limit: 1,
      }),
    ).toEqual([]);
  });
});

describe('client secret', () => {
  let token: string;
  let businessId: string;
  beforeAll(async () => {
    const shop = await server.createBusiness({ name: 'Checkout' });
    token = shop.keys.test.secretKey;
    businessId = shop.business.id;
  });

  it('is exchanged once; the second exchange is refused with 409', async () => {
    const created = await createSession(server.baseUrl, token);
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    expect(opened.session).toMatchObject({
      id: created.id,
      status: 'awaiting_payment',
      merchantName: 'Checkout',
    });
    // The payer's browser gets the public view: no payer details, no metadata.
    expect(Object.keys(opened.session)).not.toContain('payer');
    expect(Object.keys(opened.session)).not.toContain('metadata');
    const again = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: created.clientSecret },
    });
    expectError(again, 409, 'client_secret_already_used');
  });

  it('two concurrent exchanges of one secret: exactly one wins', async () => {
    const created = await createSession(server.baseUrl, token);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
          json: { clientSecret: created.clientSecret },
        }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, ...Array(9).fill(409)]);
  });

  it('of a cancelled session answers 410', async () => {
    const created = await createSession(server.baseUrl, token);
    expect(
      (await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, { token })).status,
    ).toBe(200);
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: created.clientSecret },
      }),
      410,
      'client_secret_expired',
    );
  });

  it('of a session past its lifetime answers 410, before and after the sweeper marks it', async () => {
    const created = await createSession(server.baseUrl, token, { expiresInMinutes: 5 });
    const other = await createSession(server.baseUrl, token, { expiresInMinutes: 5 });
    clock.advance(5 * 60_000);
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: created.clientSecret },
      }),
      410,
      'client_secret_expired',
    );
    await server.service.sweeper.sweep();
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: other.clientSecret },
      }),
      410,
      'client_secret_expired',
    );
  });

  it.each([
    ['too short', 'cs_test_abc'],
    ['the wrong prefix', `cs_prod_${'a'.repeat(32)}`],
    ['a secret key', `sk_test_${'a'.repeat(32)}`],
    ['well formed but unknown', `cs_test_${'a'.repeat(40)}`],
    [
      'well formed as secrets were made before they were time-ordered, but unknown',
      `cs_test_${'a'.repeat(32)}`,
    ],
  ])('that is %s answers 400 invalid_client_secret', async (_what, clientSecret) => {
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/bootstrap', { json: { clientSecret } }),
      400,
      'invalid_client_secret',
    );
  });

  it('made before secrets were time-ordered (stored as its bare SHA-256) still opens its checkout, once', async () => {
    // A session written by an earlier version of the service: a 32-character secret, its hash alone stored.
    const clientSecret = `cs_test_${randomBase62(32)}`;
    const now = clock.now();
    const id = `ses_before${randomBase62(14)}`;
    await server.service.deps.store.writes.run(async (tx) => {
      await tx.sessions.insert({
        id,
        businessId,
        environment: 'test',
        reference: `before-${id}`,
        status: 'pending',
        amount: 125_000,
        currency: 'NGN',
        payerName: 'Ada Lovelace',
        payerEmail: 'ada@example.com',
        payerPhone: null,
        metadata: {},
        clientSecretHash: sha256(clientSecret),
        createdAt: now,
        updatedAt: now,
        expiresAt: now + 30 * 60_000,
      });
    });
    const opened = await bootstrap(server.baseUrl, clientSecret);
    expect(opened.session).toMatchObject({ id, status: 'awaiting_payment', amount: 125_000 });
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/bootstrap', { json: { clientSecret } }),
      409,
      'client_secret_already_used',
    );
  });

  it.each([
    ['missing', {}],
    ['a number', { clientSecret: 42 }],
    ['with an extra field', { clientSecret: `cs_test_${'a'.repeat(32)}`, amount: 1 }],
  ])('a bootstrap body %s answers 400 validation_failed', async (_what, json) => {
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/bootstrap', { json }),
      400,
      'validation_failed',
    );
  });

  it('is not an API credential', async () => {
    const created = await createSession(server.baseUrl, token);
    expectError(
      await call(server.baseUrl, 'GET', `/api/widget/sessions/${created.id}`, {
        token: created.clientSecret,
      }),
      401,
      'client_secret_not_a_credential',
    );
  });
});
