import type { Environment } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

/** A developer signed in to the portal. Times in epoch milliseconds. */
export interface PortalSessionRecord {
  /** SHA-256 of the cookie's random id: the id itself is never stored. */
  idHash: Buffer;
  businessId: string;
  /** The secret key that opened the session (or that its session moved to when it rolled that key). */
  apiKeyId: string;
  /** The environment of the key that opened the session: the only one it reads or changes, for its life. */
  environment: Environment;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

/** A session as found, with whether the key behind it has been rolled since. */
export interface FoundPortalSession extends PortalSessionRecord {
  keyRevokedAt: number | null;
}

type PortalSessionRow = {
  id_hash: Buffer;
  business_id: string;
  api_key_id: string;
  key_revoked_at: number | null;
  environment: Environment;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
};

const toPortalSession = (row: PortalSessionRow): FoundPortalSession => ({
  idHash: row.id_hash,
  businessId: row.business_id,
  apiKeyId: row.api_key_id,
  keyRevokedAt: row.key_revoked_at,
  environment: row.environment,
  createdAt: row.created_at,
  lastSeenAt: row.last_seen_at,
  expiresAt: row.expires_at,
});

/**
 * `portal_sessions`: one row per signed-in browser, looked up by the hash of its cookie.
 *
 * @example
 * const repo = new PortalSessionRepository(db);
 * repo.insert({ idHash: sha256(cookieId), businessId, apiKeyId, environment: 'test', createdAt: now, lastSeenAt: now, expiresAt: now + 8 * 3_600_000 });
 * repo.find(sha256(cookieId))?.businessId;
 */
export class PortalSessionRepository {
  private readonly statements;

  constructor(db: SqliteDatabase) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO portal_sessions (id_hash, business_id, api_key_id, environment, created_at, last_seen_at, expires_at)
         VALUES (@idHash, @businessId, @apiKeyId, @environment, @createdAt, @lastSeenAt, @expiresAt)`,
      ),
      find: db.prepare<[Buffer], PortalSessionRow>(
        `SELECT s.*, k.revoked_at AS key_revoked_at FROM portal_sessions s
         JOIN api_keys k ON k.id = s.api_key_id WHERE s.id_hash = ?`,
      ),
      rebind: db.prepare<[string, Buffer]>('UPDATE portal_sessions SET api_key_id = ? WHERE id_hash = ?'),
      touch: db.prepare<[number, Buffer]>('UPDATE portal_sessions SET last_seen_at = ? WHERE id_hash = ?'),
      remove: db.prepare<[Buffer]>('DELETE FROM portal_sessions WHERE id_hash = ?'),
      prune: db.prepare<[number]>('DELETE FROM portal_sessions WHERE expires_at <= ?'),
    };
  }

  insert(session: PortalSessionRecord): void {
    this.statements.insert.run(session);
  }

  find(idHash: Buffer): FoundPortalSession | undefined {
    const row = this.statements.find.get(idHash);
    return row && toPortalSession(row);
  }

  touch(idHash: Buffer, at: number): void {
    this.statements.touch.run(at, idHash);
  }

  /** Moves a session to another key of its business (the one that replaced the key it was opened with). */
  rebind(idHash: Buffer, apiKeyId: string): void {
    this.statements.rebind.run(apiKeyId, idHash);
  }

  remove(idHash: Buffer): void {
    this.statements.remove.run(idHash);
  }

  /** Deletes sessions past their absolute end. */
  prune(now: number): void {
    this.statements.prune.run(now);
  }
}
