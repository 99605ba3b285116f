import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiKey } from '../../reference-server/src/db/api-keys.ts';
import type { UnappliedCreditRecord } from '../../reference-server/src/db/unapplied-credits.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { openStoreTwins, type StoreTwins } from '../support/repository-twins.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// One storage layer, two stores (issues 13 and 25). The same calls on the service's repositories over a real
// SQLite file and over a real PostgreSQL 15, each asserted, must answer the same records: here businesses, API
// keys, portal sessions, unapplied credits and the audit log.

reportIfPostgresMissing();

const T0 = Date.parse('2026-11-23T12:00:00.000Z');
const sha256 = (text: string) => createHash('sha256').update(text).digest();

describe.runIf(postgresAvailable)('merchant repositories: SQLite and PostgreSQL answer alike', () => {
  const scratch = useScratchDatabase();
  let twins: StoreTwins;

  afterEach(async () => {
    await twins?.close();
  });

  it('businesses: insert, find, KYC approval (true for a known business, also a second time; false for none)', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const answers = await twins.both(async ({ repos }) => {
      await repos.businesses.insert({
        id: 'biz_pending',
        name: 'Pending Ltd',
        kycApproved: false,
        createdAt: T0,
      });
      await repos.businesses.insert({
        id: 'biz_approved',
        name: 'Approved Ltd',
        kycApproved: true,
        createdAt: T0 + 1,
      });
      const before = await repos.businesses.find('biz_pending');
      const approved = await repos.businesses.approveKyc('biz_pending');
      const again = await repos.businesses.approveKyc('biz_pending');
      const missing = await repos.businesses.approveKyc('biz_missing');
      return {
        before,
        approved,
        again,
        missing,
        after: await repos.businesses.find('biz_pending'),
        other: await repos.businesses.find('biz_approved'),
        unknown: await repos.businesses.find('biz_missing'),
      };
    });
    expect(answers.sqlite).toEqual({
      before: { id: 'biz_pending', name: 'Pending Ltd', kycApproved: false, createdAt: T0 },
      approved: true,
      again: true,
      missing: false,
      after: { id: 'biz_pending', name: 'Pending Ltd', kycApproved: true, createdAt: T0 },
      other: { id: 'biz_approved', name: 'Approved Ltd', kycApproved: true, createdAt: T0 + 1 },
      unknown: undefined,
    });
    expect(answers.postgres).toEqual(answers.sqlite);
    // A business id is unique on both: a second insert is refused, not merged.
    for (const store of [twins.sqlite, twins.postgres]) {
      await expect(
        store.repos.businesses.insert({
          id: 'biz_pending',
          name: 'Twice',
          kycApproved: false,
          createdAt: T0,
        }),
      ).rejects.toThrow();
    }
  });

  it('API keys: insert, findByHash, findWithOwner, active per environment and kind, revoke once', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const key = (id: string, environment: 'test' | 'live', kind: 'secret' | 'publishable', at: number) => ({
      id,
      businessId: 'biz_keys',
      environment,
      kind,
      keyHash: sha256(`token-${id}`),
      prefix: kind === 'secret' ? `sk_${environment}_` : `pk_${environment}_`,
      last4: id.slice(-4).padStart(4, '0'),
      createdAt: at,
    });
    const answers = await twins.both(async ({ repos }) => {
      await repos.businesses.insert({ id: 'biz_keys', name: 'Keys Ltd', kycApproved: true, createdAt: T0 });
      await repos.apiKeys.insert(key('key_secret_1', 'test', 'secret', T0 + 1));
      await repos.apiKeys.insert(key('key_public_1', 'test', 'publishable', T0 + 2));
      await repos.apiKeys.insert(key('key_live_1', 'live', 'secret', T0 + 3));
      const byHash = await repos.apiKeys.findByHash(sha256('token-key_secret_1'));
      const unknownHash = await repos.apiKeys.findByHash(sha256('no such token'));
      const withOwner = await repos.apiKeys.findWithOwner(sha256('token-key_live_1'));
      const activeBefore = await repos.apiKeys.active('biz_keys', 'test', 'secret');
      // A roll: the new secret key first, then the old one revoked.
      await repos.apiKeys.insert(key('key_secret_2', 'test', 'secret', T0 + 10));
      const duringRoll = await repos.apiKeys.active('biz_keys', 'test', 'secret');
      await repos.apiKeys.revoke('key_secret_1', T0 + 11);
      await repos.apiKeys.revoke('key_secret_1', T0 + 99); // already revoked: keeps its first time
      return {
        byHash,
        unknownHash,
        withOwner,
        activeBefore,
        duringRoll: duringRoll.map((k: ApiKey) => k.id),
        activeAfter: (await repos.apiKeys.active('biz_keys', 'test', 'secret')).map((k: ApiKey) => k.id),
        activeLive: (await repos.apiKeys.active('biz_keys', 'live', 'secret')).map((k: ApiKey) => k.id),
        publishable: (await repos.apiKeys.active('biz_keys', 'test', 'publishable')).map((k: ApiKey) => k.id),
        revoked: await repos.apiKeys.findWithOwner(sha256('token-key_secret_1')),
        missing: await repos.apiKeys.findWithOwner(sha256('no such token')),
      };
    });
    const secret1 = { ...key('key_secret_1', 'test', 'secret', T0 + 1), revokedAt: null };
    expect(answers.sqlite).toEqual({
      byHash: secret1,
      unknownHash: undefined,
      withOwner: {
        key: { ...key('key_live_1', 'live', 'secret', T0 + 3), revokedAt: null },
        business: { id: 'biz_keys', name: 'Keys Ltd', kycApproved: true, createdAt: T0 },
      },
      activeBefore: [secret1],
      duringRoll: ['key_secret_1', 'key_secret_2'],
      activeAfter: ['key_secret_2'],
      activeLive: ['key_live_1'],
      publishable: ['key_public_1'],
      revoked: {
        key: { ...secret1, revokedAt: T0 + 11 },
        business: { id: 'biz_keys', name: 'Keys Ltd', kycApproved: true, createdAt: T0 },
      },
      missing: undefined,
    });
    expect(answers.postgres).toEqual(answers.sqlite);
    // The hash is a Buffer on both, byte for byte what was stored.
    expect(Buffer.isBuffer(answers.postgres.byHash?.keyHash)).toBe(true);
  });

  it('portal sessions: insert, find with the key revocation, touch, rebind, remove, prune at the absolute end', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const session = (name: string, expiresAt: number) => ({
      idHash: sha256(`cookie-${name}`),
      businessId: 'biz_portal',
      apiKeyId: 'key_old',
      environment: 'test' as const,
      createdAt: T0,
      lastSeenAt: T0,
      expiresAt,
    });
    const answers = await twins.both(async ({ repos }) => {
      await repos.businesses.insert({
        id: 'biz_portal',
        name: 'Portal Ltd',
        kycApproved: true,
        createdAt: T0,
      });
      for (const [id, at] of [
        ['key_old', T0],
        ['key_new', T0 + 5],
      ] as const) {
        await repos.apiKeys.insert({
          id,
          businessId: 'biz_portal',
          environment: 'test',
          kind: 'secret',
          keyHash: sha256(id),
          prefix: 'sk_test_',
          last4: '1234',
          createdAt: at,
        });
      }
      await repos.portalSessions.insert(session('a', T0 + 8 * 3_600_000));
      await repos.portalSessions.insert(session('b', T0 + 1_000));
      await repos.portalSessions.insert(session('c', T0 + 2_000));
      const fresh = await repos.portalSessions.find(sha256('cookie-a'));
      await repos.portalSessions.touch(sha256('cookie-a'), T0 + 60_000);
      // The key it was opened with is rolled: the session moves to the new key, and the old one is revoked.
      await repos.portalSessions.rebind(sha256('cookie-a'), 'key_new');
      await repos.apiKeys.revoke('key_old', T0 + 70_000);
      const afterRoll = await repos.portalSessions.find(sha256('cookie-a'));
      const stillOnOldKey = await repos.portalSessions.find(sha256('cookie-b'));
      // Prune at exactly b's end: b goes (expires_at <= now), c stays until its own end.
      await repos.portalSessions.prune(T0 + 1_000);
      const afterPrune = {
        a: (await repos.portalSessions.find(sha256('cookie-a'))) !== undefined,
        b: (await repos.portalSessions.find(sha256('cookie-b'))) !== undefined,
        c: (await repos.portalSessions.find(sha256('cookie-c'))) !== undefined,
      };
      await repos.portalSessions.remove(sha256('cookie-a'));
      return {
        fresh,
        afterRoll,
        stillOnOldKey,
        afterPrune,
        afterRemove: await repos.portalSessions.find(sha256('cookie-a')),
      };
    });
    expect(answers.sqlite).toEqual({
      fresh: { ...session('a', T0 + 8 * 3_600_000), keyRevokedAt: null },
      afterRoll: {
        ...session('a', T0 + 8 * 3_600_000),
        apiKeyId: 'key_new',
        lastSeenAt: T0 + 60_000,
        keyRevokedAt: null,
      },
      stillOnOldKey: { ...session('b', T0 + 1_000), keyRevokedAt: T0 + 70_000 },
      afterPrune: { a: true, b: false, c: true },
      afterRemove: undefined,
    });
    expect(answers.postgres).toEqual(answers.sqlite);
  });

  it('unapplied credits: insert answers its seq, list oldest first by business with a limit; a transfer is recorded once', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const credit = (n: number, businessId: string | null): Omit<UnappliedCreditRecord, 'seq'> => ({
      id: `uc_${n}`,
      transferId: `trf_${n}`,
      businessId,
      environment: businessId === null ? null : 'test',
      sessionId: businessId === null ? null : `ses_${n}`,
      accountNumber: `90000000${n}`,
      amount: 150_000 + n,
      currency: 'NGN',
      reason: businessId === null ? 'unknown_account' : 'session_ended',
      refundStatus: n === 3 ? 'refund_refused' : 'refunded',
      refundId: n === 3 ? null : `rfd_${n}`,
      createdAt: T0 + n,
    });
    const answers = await twins.both(async ({ repos }) => {
      const inserted = [
        await repos.unappliedCredits.insert(credit(1, 'biz_a')),
        await repos.unappliedCredits.insert(credit(2, null)),
        await repos.unappliedCredits.insert(credit(3, 'biz_a')),
        await repos.unappliedCredits.insert(credit(4, 'biz_b')),
      ];
      return {
        inserted,
        all: await repos.unappliedCredits.list({ limit: 100 }),
        firstTwo: await repos.unappliedCredits.list({ limit: 2 }),
        businessA: await repos.unappliedCredits.list({ businessId: 'biz_a', limit: 100 }),
        businessAFirst: await repos.unappliedCredits.list({ businessId: 'biz_a', limit: 1 }),
        none: await repos.unappliedCredits.list({ businessId: 'biz_none', limit: 100 }),
      };
    });
    const stored = [1, 2, 3, 4].map((n) => ({
      ...credit(n, n === 2 ? null : n === 4 ? 'biz_b' : 'biz_a'),
      seq: n,
    }));
    expect(answers.sqlite).toEqual({
      inserted: stored,
      all: stored,
      firstTwo: stored.slice(0, 2),
      businessA: [stored[0], stored[2]],
      businessAFirst: [stored[0]],
      none: [],
    });
    expect(answers.postgres).toEqual(answers.sqlite);
    for (const store of [twins.sqlite, twins.postgres]) {
      await expect(
        store.repos.unappliedCredits.insert({ ...credit(1, 'biz_a'), id: 'uc_again' }),
      ).rejects.toThrow();
      expect(await store.repos.unappliedCredits.list({ limit: 100 })).toHaveLength(4);
    }
  });

  it('audit log: entries recorded with a fresh aud_ id, listed oldest first, by business, with a limit', async () => {
    twins = await openStoreTwins(scratch.postgres);
    const answers = await twins.both(async ({ repos }) => {
      await repos.auditLog.record({
        at: T0,
        actor: 'cli:ops',
        action: 'kyc.approved',
        businessId: 'biz_a',
        environment: null,
        target: 'biz_a',
        details: {},
      });
      await repos.auditLog.record({
        at: T0 + 1,
        actor: 'secret_key:test',
        action: 'webhook_endpoint.created',
        businessId: 'biz_b',
        environment: 'test',
        target: 'we_1',
        details: { url: 'https://shop.example/hooks', events: ['session.successful'] },
      });
      await repos.auditLog.record({
        at: T0 + 2,
        actor: 'service',
        action: 'credit.refunded',
        businessId: 'biz_a',
        environment: 'live',
        target: 'uc_1',
        details: { amount: 150_000, nested: { ok: true } },
      });
      return {
        all: await repos.auditLog.list({ limit: 100 }),
        firstTwo: await repos.auditLog.list({ limit: 2 }),
        businessA: await repos.auditLog.list({ businessId: 'biz_a', limit: 100 }),
        businessAFirst: await repos.auditLog.list({ businessId: 'biz_a', limit: 1 }),
      };
    });
    for (const answer of [answers.sqlite, answers.postgres]) {
      for (const entry of answer.all) expect(entry.id).toMatch(/^aud_/);
      expect(new Set(answer.all.map((entry) => entry.id)).size).toBe(3);
    }
    // Ids are random per store; everything else is the same.
    const withoutIds = (answer: typeof answers.sqlite) =>
      Object.fromEntries(
        Object.entries(answer).map(([name, entries]) => [
          name,
          entries.map(({ id: _id, ...entry }) => entry),
        ]),
      );
    expect(withoutIds(answers.sqlite)).toEqual({
      all: [
        expect.objectContaining({ seq: 1, action: 'kyc.approved', details: {} }),
        expect.objectContaining({
          seq: 2,
          actor: 'secret_key:test',
          businessId: 'biz_b',
          environment: 'test',
          target: 'we_1',
          details: { url: 'https://shop.example/hooks', events: ['session.successful'] },
        }),
        expect.objectContaining({ seq: 3, at: T0 + 2, details: { amount: 150_000, nested: { ok: true } } }),
      ],
      firstTwo: [expect.objectContaining({ seq: 1 }), expect.objectContaining({ seq: 2 })],
      businessA: [expect.objectContaining({ seq: 1 }), expect.objectContaining({ seq: 3 })],
      businessAFirst: [expect.objectContaining({ seq: 1 })],
    });
    expect(withoutIds(answers.postgres)).toEqual(withoutIds(answers.sqlite));
  });
});
