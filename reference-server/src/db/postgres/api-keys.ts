import type { Environment, KeyKind } from '@servicepay/node/protocol';
import type { ApiKey, ApiKeyRepository, ApiKeyWithOwner } from '../api-keys.ts';
import type { Async } from '../repositories.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

type ApiKeyRow = {
  id: string;
  business_id: string;
  environment: Environment;
  kind: KeyKind;
  key_hash: Buffer;
  prefix: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
};

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  kind: row.kind,
  keyHash: row.key_hash,
  prefix: row.prefix,
  last4: row.last4,
  createdAt: exactInteger(row.created_at),
  revokedAt: exactIntegerOrNull(row.revoked_at),
});

/**
 * `api_keys` on PostgreSQL: the twin of the SQLite `ApiKeyRepository`. Keys are found by the SHA-256 of the
 * token (`bytea`, unique), never by the token.
 *
 * @example
 * const keys = new PostgresApiKeyRepository(pool);
 * const found = await keys.findWithOwner(sha256(token)); // { key, business } | undefined
 */
export class PostgresApiKeyRepository implements Async<ApiKeyRepository> {
  constructor(private readonly db: Queryable) {}

  async insert(key: Omit<ApiKey, 'revokedAt'>): Promise<void> {
    await this.db.query(
      `INSERT INTO api_keys (id, business_id, environment, kind, key_hash, prefix, last4, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [key.id, key.businessId, key.environment, key.kind, key.keyHash, key.prefix, key.last4, key.createdAt],
    );
  }

  async findByHash(hash: Buffer): Promise<ApiKey | undefined> {
    const { rows } = await runQuery<ApiKeyRow>(this.db, 'SELECT * FROM api_keys WHERE key_hash = $1', [hash]);
    return rows[0] && toApiKey(rows[0]);
  }

  /** The key with this hash and its business, in one round trip (revoked keys too: the caller says why they fail). */
  async findWithOwner(hash: Buffer): Promise<ApiKeyWithOwner | undefined> {
    const { rows } = await runQuery<
      ApiKeyRow & { business_name: string; business_kyc_status: string; business_created_at: string }
    >(
      this.db,
      `SELECT api_keys.*, businesses.name AS business_name, businesses.kyc_status AS business_kyc_status,
         businesses.created_at AS business_created_at
       FROM api_keys JOIN businesses ON businesses.id = api_keys.business_id
       WHERE api_keys.key_hash = $1`,
      [hash],
    );
    const row = rows[0];
    return (
      row && {
        key: toApiKey(row),
        business: {
          id: row.business_id,
          name: row.business_name,
          kycApproved: row.business_kyc_status === 'approved',
          createdAt: exactInteger(row.business_created_at),
        },
      }
    );
  }

  async active(businessId: string, environment: Environment, kind: KeyKind): Promise<ApiKey[]> {
    const { rows } = await runQuery<ApiKeyRow>(
      this.db,
      // ORDER BY: SQLite hands these back in rowid (insertion) order; PostgreSQL promises no order without one.
      `SELECT * FROM api_keys WHERE business_id = $1 AND environment = $2 AND kind = $3 AND revoked_at IS NULL
       ORDER BY created_at, id`,
      [businessId, environment, kind],
    );
    return rows.map(toApiKey);
  }

  /** Conditional: a key already revoked keeps the time it was first revoked. */
  async revoke(id: string, at: number): Promise<void> {
    await this.db.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
  }
}
