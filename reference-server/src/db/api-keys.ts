import type { Environment, KeyKind } from '@servicepay/node/protocol';
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

export class ApiKeyRepository {
  private readonly insertStatement;
  private readonly findByHashStatement;
  private readonly activeStatement;
  private readonly revokeStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO api_keys (id, business_id, environment, kind, key_hash, prefix, last4, created_at)
       VALUES (@id, @businessId, @environment, @kind, @keyHash, @prefix, @last4, @createdAt)`,
    );
    this.findByHashStatement = db.prepare<[Buffer], ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ?');
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

  active(businessId: string, environment: Environment, kind: KeyKind): ApiKey[] {
    return this.activeStatement.all(businessId, environment, kind).map(toApiKey);
  }

  revoke(id: string, at: number): void {
    this.revokeStatement.run(at, id);
  }
}
