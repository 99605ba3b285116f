import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256 } from '../internal/random.ts';
import { REMEMBERED_KEYS_MAX, SqlApiKeyRepository } from './api-keys.ts';
import { SqlBusinessRepository } from './businesses.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { SqliteRunner } from './sqlite-runner.ts';

// Authenticating a request asks `findWithOwner` for its key; the repository remembers keys it found and
// answers again while `credentials_version` says nothing changed (issue 12: the join was the largest read of a
// session create). What a merchant relies on: a key rolled or a business approved, by this process or by
// another connection on the same file (the CLI beside a running server), is seen by the very next lookup.
// These tests use a real file and a second real connection, as the CLI is.

let folder: string;
let db: SqliteDatabase;
let other: SqliteDatabase;
let keys: SqlApiKeyRepository;

const TOKEN = 'sk_test_00000000000000000000000000000001';

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'servicepay-keys-'));
  db = openDatabase(join(folder, 'servicepay.db'));
  other = openDatabase(join(folder, 'servicepay.db'));
  keys = new SqlApiKeyRepository(new SqliteRunner(db));
  await new SqlBusinessRepository(new SqliteRunner(db)).insert({
    id: 'biz_a',
    name: 'A',
    kycApproved: false,
    createdAt: 1,
  });
  await keys.insert(keyRow('key_1', TOKEN));
});

afterEach(() => {
  other.close();
  db.close();
  rmSync(folder, { recursive: true, force: true });
});

const keyRow = (id: string, token: string) => ({
  id,
  businessId: 'biz_a',
  environment: 'test' as const,
  kind: 'secret' as const,
  keyHash: sha256(token),
  prefix: 'sk_test_',
  last4: token.slice(-4),
  createdAt: 1,
});

describe('ApiKeyRepository.findWithOwner', () => {
  it('sees a key revoked by another connection on the same file at the next lookup (the CLI rolling a key)', async () => {
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.revokedAt).toBeNull();
    await new SqlApiKeyRepository(new SqliteRunner(other)).revoke('key_1', 42);
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.revokedAt).toBe(42);
  });

  it('sees a business approved by another connection at the next lookup', async () => {
    expect((await keys.findWithOwner(sha256(TOKEN)))?.business.kycApproved).toBe(false);
    await new SqlBusinessRepository(new SqliteRunner(other)).approveKyc('biz_a');
    expect((await keys.findWithOwner(sha256(TOKEN)))?.business.kycApproved).toBe(true);
  });

  it('sees its own connection revoke a key at the next lookup', async () => {
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.revokedAt).toBeNull();
    await keys.revoke('key_1', 7);
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.revokedAt).toBe(7);
  });

  it('finds a key added after an unknown token was looked up (an unknown token is not remembered)', async () => {
    const later = 'sk_test_00000000000000000000000000000002';
    expect(await keys.findWithOwner(sha256(later))).toBeUndefined();
    await new SqlApiKeyRepository(new SqliteRunner(other)).insert(keyRow('key_2', later));
    expect((await keys.findWithOwner(sha256(later)))?.key.id).toBe('key_2');
  });

  it('answers a remembered key without reading it again, and only the version counter keeps that answer fresh', async () => {
    const first = await keys.findWithOwner(sha256(TOKEN));
    expect(await keys.findWithOwner(sha256(TOKEN))).toBe(first);
    // A change that does not bump the counter (its trigger dropped) is not seen: the answer was remembered.
    other.exec('DROP TRIGGER api_keys_updated');
    other.prepare('UPDATE api_keys SET revoked_at = 5 WHERE id = ?').run('key_1');
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.revokedAt).toBeNull();
    // Any bump of the counter, here by a change to another table it watches, makes the next lookup read again.
    await new SqlBusinessRepository(new SqliteRunner(other)).approveKyc('biz_a');
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.revokedAt).toBe(5);
  });

  it('inside a transaction reads uncommitted rows and remembers none of them', async () => {
    const added = 'sk_test_00000000000000000000000000000003';
    db.exec('BEGIN');
    await keys.insert(keyRow('key_3', added));
    expect((await keys.findWithOwner(sha256(added)))?.key.id).toBe('key_3');
    db.exec('ROLLBACK');
    // The rolled-back insert had moved the counter one up; another change brings it to that same number.
    await new SqlBusinessRepository(new SqliteRunner(other)).approveKyc('biz_a');
    expect(await keys.findWithOwner(sha256(added))).toBeUndefined();
  });

  it('hands out frozen answers, which every request with the key shares', async () => {
    const found = await keys.findWithOwner(sha256(TOKEN));
    expect(Object.isFrozen(found)).toBe(true);
    expect(Object.isFrozen(found?.key)).toBe(true);
    expect(Object.isFrozen(found?.business)).toBe(true);
  });

  it(`remembers at most ${REMEMBERED_KEYS_MAX} keys, then starts again, and still answers every key`, async () => {
    const tokens = Array.from(
      { length: REMEMBERED_KEYS_MAX + 1 },
      (_, i) => `sk_test_${String(i + 10).padStart(32, '0')}`,
    );
    db.transaction(() => {
      for (const [i, token] of tokens.entries()) keys.insert(keyRow(`key_n${i}`, token));
    })();
    for (const token of tokens)
      expect((await keys.findWithOwner(sha256(token)))?.key.last4).toBe(token.slice(-4));
    expect(keys.rememberedCount).toBe(1);
    expect((await keys.findWithOwner(sha256(TOKEN)))?.key.id).toBe('key_1');
    expect(keys.rememberedCount).toBe(2);
  });
});
