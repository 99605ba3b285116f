import type { Environment, KeyKind } from '@servicepay/node/protocol';
import { BoundedMap } from '../internal/bounded-map.ts';
import { type Business, businesses } from './businesses.ts';
import { type SqlRunner, sql } from './sql.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { column, type RecordOf, table } from './table.ts';

/** `api_keys`: stored only as the SHA-256 of the key, with what is safe to show (prefix, last four). */
export const apiKeys = table('api_keys', {
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  kind: column.text<KeyKind>(),
  keyHash: column.bytes(),
  /** `sk_test_`: what the key is, safe to show. */
  prefix: column.text(),
  last4: column.text(),
  createdAt: column.int(),
  revokedAt: column.nullable(column.int()),
});

export type ApiKey = RecordOf<typeof apiKeys.columns>;

/**
 * A key as it may be shown after its creation (the portal, the request log): its prefix and last four only.
 *
 * @example
 * keyHint(key); // 'sk_test_…a1B2'
 */
export const keyHint = (key: Pick<ApiKey, 'prefix' | 'last4'>): string => `${key.prefix}…${key.last4}`;

/** A key found by its hash, with the business that owns it: what authenticating a request needs. */
export interface ApiKeyWithOwner {
  key: ApiKey;
  business: Business;
}

/** A key remembered from an earlier read, and the credentials version (migration 012 / 020) of that read. */
export interface RecalledKey {
  found: ApiKeyWithOwner;
  credentialsVersion: number;
}

/** API keys as the service reads and writes them. */
export interface ApiKeyRepository {
  insert(key: Omit<ApiKey, 'revokedAt'>): Promise<void>;
  findByHash(hash: Buffer): Promise<ApiKey | undefined>;
  /**
   * The key with this hash and its business, as committed now, in one statement (revoked keys too: the caller
   * says why they fail). Never an answer older than the last commit: a key rolled anywhere stops at the next
   * request.
   */
  findWithOwner(hash: Buffer): Promise<ApiKeyWithOwner | undefined>;
  /**
   * A key `findWithOwner` found before, from memory, with the credentials version it was read at; no round trip.
   * Not an answer yet: the caller trusts it only once a statement of its own request read the same version
   * (`LimitDecision.credentialsVersion`, which the rate limiter's hit returns), and calls `findWithOwner`
   * otherwise. Only on PostgreSQL, where reading the key is a round trip (`PostgresApiKeyRepository`); on
   * SQLite `findWithOwner` confirms a remembered key by itself.
   */
  recall?(hash: Buffer): RecalledKey | undefined;
  /** A business's live keys of one environment and kind, oldest first. */
  active(businessId: string, environment: Environment, kind: KeyKind): Promise<ApiKey[]>;
  /** Conditional: a key already revoked keeps the time it was first revoked. */
  revoke(id: string, at: number): Promise<void>;
}

/**
 * How many keys `findWithOwner` keeps in memory at most on SQLite; past it, it forgets them all and starts
 * again. Only keys that exist are kept (an unknown token is never remembered), so a client sending made-up keys
 * cannot grow it.
 */
export const REMEMBERED_KEYS_MAX = 10_000;

/** A row of `keyWithOwnerByHash`: the key's columns and its business's. */
export type OwnedKeyRow = ApiKey & {
  businessName: string;
  businessKycStatus: string;
  businessCreatedAt: number;
};

/** The read of a key by its hash with its business, `more` columns added (a row of `OwnedKeyRow` and those). */
export const keyWithOwnerByHash = (more = ''): string =>
  `SELECT ${apiKeys.select('k')}, b.name AS "businessName",
       b.${businesses.column('kycApproved')} AS "businessKycStatus", b.created_at AS "businessCreatedAt"${more}
     FROM api_keys k JOIN businesses b ON b.id = k.business_id
     WHERE k.key_hash = @hash`;

/** The key and business of a `keyWithOwnerByHash` row, frozen: every request with the key may share it. */
export function ownedKeyOf(row: OwnedKeyRow): ApiKeyWithOwner {
  const { businessName, businessKycStatus, businessCreatedAt, ...key } = row;
  return Object.freeze({
    key: Object.freeze(key),
    business: Object.freeze({
      id: key.businessId,
      name: businessName,
      kycApproved: businessKycStatus === 'approved',
      createdAt: businessCreatedAt,
    }),
  });
}

const statements = {
  insert: sql(apiKeys.insert()),
  findByHash: sql<ApiKey>(`SELECT ${apiKeys.select()} FROM api_keys WHERE key_hash = @hash`),
  findWithOwner: sql<OwnedKeyRow>(keyWithOwnerByHash()),
  // Bumped by triggers on every change to api_keys and businesses (SQLite migration 012).
  credentialsVersion: sql<{ version: number }>('SELECT version FROM credentials_version WHERE only_row = 1'),
  active: sql<ApiKey>(
    `SELECT ${apiKeys.select()} FROM api_keys
     WHERE business_id = @businessId AND environment = @environment AND kind = @kind AND revoked_at IS NULL
     ORDER BY created_at, id`,
  ),
  revoke: sql('UPDATE api_keys SET revoked_at = @at WHERE id = @id AND revoked_at IS NULL'),
};

/**
 * `ApiKeyRepository` on either store. On SQLite, where the service is one process, a key found outside a
 * transaction is remembered and answered again while `credentials_version` (one row, bumped by a trigger on any
 * change to a key or a business, by any connection) still reads what it read when the key was found: one small
 * read instead of a join. Inside a transaction (a write job) the rows may be uncommitted: read, never
 * remembered. On PostgreSQL each lookup reads the key: several instances share the database, and no read
 * cheaper than the key itself would tell one that another changed a key (the pool's own repository,
 * `PostgresApiKeyRepository`, remembers keys and has them confirmed by the rate limiter's statement). The
 * answers are frozen; every request with the key may share one.
 *
 * @example
 * const found = await new SqlApiKeyRepository(runner).findWithOwner(sha256(token)); // { key, business } | undefined
 */
export class SqlApiKeyRepository implements ApiKeyRepository {
  /** Keys found outside a transaction (SQLite), by the base64 of their hash; valid while the version holds. */
  private readonly remembered = new BoundedMap<string, ApiKeyWithOwner>(REMEMBERED_KEYS_MAX);
  private rememberedAt = -1;

  constructor(protected readonly db: SqlRunner) {}

  async insert(key: Omit<ApiKey, 'revokedAt'>): Promise<void> {
    await this.db.run(statements.insert, { ...key, revokedAt: null });
  }

  async findByHash(hash: Buffer): Promise<ApiKey | undefined> {
    return this.db.get(statements.findByHash, { hash });
  }

  async findWithOwner(hash: Buffer): Promise<ApiKeyWithOwner | undefined> {
    const db = this.db;
    if (!(db instanceof SqliteRunner) || db.db.inTransaction) return this.readWithOwner(hash);
    const version = db.get(statements.credentialsVersion)?.version ?? 0;
    if (version !== this.rememberedAt) {
      this.remembered.clear();
      this.rememberedAt = version;
    }
    const rememberedAs = hash.toString('base64');
    const known = this.remembered.get(rememberedAs);
    if (known) return known;
    // Read after the version: a change committed in between makes the version differ at the next request, which
    // then forgets this answer; the answer is never older than the version it is kept under.
    const found = await this.readWithOwner(hash);
    if (found) this.remembered.set(rememberedAs, found);
    return found;
  }

  /** How many keys are remembered now (at most `REMEMBERED_KEYS_MAX`; always 0 on PostgreSQL). */
  get rememberedCount(): number {
    return this.remembered.size;
  }

  async active(businessId: string, environment: Environment, kind: KeyKind): Promise<ApiKey[]> {
    return this.db.all(statements.active, { businessId, environment, kind });
  }

  async revoke(id: string, at: number): Promise<void> {
    await this.db.run(statements.revoke, { id, at });
  }

  private async readWithOwner(hash: Buffer): Promise<ApiKeyWithOwner | undefined> {
    const row = await this.db.get(statements.findWithOwner, { hash });
    return row && ownedKeyOf(row);
  }
}
