import type { Environment, KeyKind } from '@servicepay/node/protocol';
import { BoundedMap } from '../internal/bounded-map.ts';
import type { Business } from './businesses.ts';
import type { SqliteDatabase } from './database.ts';

export interface ApiKey {
  id: string;
  businessId: string;
  environment: Environment;
  kind: KeyKind;
  keyHash: Buffer;
  /** `sk_test_`: what the key is, safe to show. */
  prefix: string;
  last4: string;
  createdAt: number;
  revokedAt: number | null;
}

type ApiKeyRow = {
  id: string;
  business_id: string;
  environment: Environment;
  kind: KeyKind;
  key_hash: Buffer;
  prefix: string;
  last4: string;
  created_at: number;
  revoked_at: number | null;
};

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  kind: row.kind,
  keyHash: row.key_hash,
  prefix: row.prefix,
  last4: row.last4,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

/** A key found by its hash, with the business that owns it: what authenticating a request needs. */
export interface ApiKeyWithOwner {
  key: ApiKey;
  business: Business;
}

/**
 * How many keys `findWithOwner` keeps in memory at most; past it, it forgets them all and starts again. Only keys
 * that exist are kept (an unknown token is never remembered), so a client sending made-up keys cannot grow it.
 */
export const REMEMBERED_KEYS_MAX = 10_000;

export class ApiKeyRepository {
  private readonly insertStatement;
  private readonly findByHashStatement;
  private readonly findWithOwnerStatement;
  private readonly credentialsVersionStatement;
  private readonly activeStatement;
  private readonly revokeStatement;
  /**
   * Keys found outside a transaction, by the base64 of their hash; valid while `credentials_version` reads
   * `rememberedAt`.
   */
  private readonly remembered = new BoundedMap<string, ApiKeyWithOwner>(REMEMBERED_KEYS_MAX);
  private rememberedAt = -1;

  constructor(private readonly db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO api_keys (id, business_id, environment, kind, key_hash, prefix, last4, created_at)
       VALUES (@id, @businessId, @environment, @kind, @keyHash, @prefix, @last4, @createdAt)`,
    );
    this.findByHashStatement = db.prepare<[Buffer], ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ?');
    // One statement, not the key and then its business: every authenticated request makes this lookup, and each
    // statement outside a transaction opens its own read transaction (WAL locks), the larger part of its cost.
    this.findWithOwnerStatement = db.prepare<
      [Buffer],
      ApiKeyRow & { business_name: string; business_kyc_status: string; business_created_at: number }
    >(
      `SELECT api_keys.*, businesses.name AS business_name, businesses.kyc_status AS business_kyc_status,
         businesses.created_at AS business_created_at
       FROM api_keys JOIN businesses ON businesses.id = api_keys.business_id
       WHERE api_keys.key_hash = ?`,
    );
    // Bumped by triggers on every change to api_keys and businesses (migration 009).
    this.credentialsVersionStatement = db
      .prepare<[], number>('SELECT version FROM credentials_version WHERE only_row = 1')
      .pluck();
    this.activeStatement = db.prepare<[string, string, string], ApiKeyRow>(
      'SELECT * FROM api_keys WHERE business_id = ? AND environment = ? AND kind = ? AND revoked_at IS NULL',
    );
    this.revokeStatement = db.prepare<[number, string]>(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    );
  }

  insert(key: Omit<ApiKey, 'revokedAt'>): void {
    this.insertStatement.run(key);
  }

  findByHash(hash: Buffer): ApiKey | undefined {
    const row = this.findByHashStatement.get(hash);
    return row && toApiKey(row);
  }

  /**
   * The key with this hash and its business, as committed now (revoked keys too: the caller says why they fail).
   * Every authenticated request asks, so a key found once is remembered and answered again while
   * `credentials_version` (one row, bumped by a trigger on any change to a key or a business, by any connection)
   * still reads what it read when the key was found: one small read instead of a join, and never an answer older
   * than the last commit, so a key rolled by this process or by the CLI on the same file stops at the next
   * request. Inside a transaction (a write job) the rows may be uncommitted: read, never remembered. The answer
   * is frozen; it may be shared by every request with the key.
   *
   * @example
   * const found = repository.findWithOwner(sha256(token)); // { key, business } | undefined
   */
  findWithOwner(hash: Buffer): ApiKeyWithOwner | undefined {
    if (this.db.inTransaction) return this.readWithOwner(hash);
    const version = this.credentialsVersionStatement.get();
    if (version !== this.rememberedAt) {
      this.remembered.clear();
      this.rememberedAt = version as number;
    }
    const rememberedAs = hash.toString('base64');
    const known = this.remembered.get(rememberedAs);
    if (known) return known;
    // Read after the version: a change committed in between makes the version differ at the next request, which
    // then forgets this answer; the answer is never older than the version it is kept under.
    const found = this.readWithOwner(hash);
    if (found) this.remembered.set(rememberedAs, found);
    return found;
  }

  /** How many keys are remembered now (at most `REMEMBERED_KEYS_MAX`). */
  get rememberedCount(): number {
    return this.remembered.size;
  }

  private readWithOwner(hash: Buffer): ApiKeyWithOwner | undefined {
    const row = this.findWithOwnerStatement.get(hash);
    return (
      row &&
      Object.freeze({
        key: Object.freeze(toApiKey(row)),
        business: Object.freeze({
          id: row.business_id,
          name: row.business_name,
          kycApproved: row.business_kyc_status === 'approved',
          createdAt: row.business_created_at,
        }),
      })
    );
  }

  active(businessId: string, environment: Environment, kind: KeyKind): ApiKey[] {
    return this.activeStatement.all(businessId, environment, kind).map(toApiKey);
  }

  revoke(id: string, at: number): void {
    this.revokeStatement.run(at, id);
  }
}
