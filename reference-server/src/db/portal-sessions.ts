import type { Environment } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

/** A developer signed in to the portal. Times in epoch milliseconds. */
export interface PortalSessionRecord {
  /** SHA-256 of the cookie's random id: the id itself is never stored. */
  idHash: Buffer;
  businessId: string;
  /** What the portal shows; it never changes which environment a key reaches. */
  environment: Environment;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

type PortalSessionRow = {
  id_hash: Buffer;
  business_id: string;
  environment: Environment;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
};

const toPortalSession = (row: PortalSessionRow): PortalSessionRecord => ({
  idHash: row.id_hash,
  businessId: row.business_id,
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
 * repo.insert({ idHash: sha256(cookieId), businessId, environment: 'test', createdAt: now, lastSeenAt: now, expiresAt: now + 8 * 3_600_000 });
 * repo.find(sha256(cookieId))?.businessId;
 */
export class PortalSessionRepository {
  private readonly statements;

  constructor(db: SqliteDatabase) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO portal_sessions (id_hash, business_id, environment, created_at, last_seen_at, expires_at)
         VALUES (@idHash, @businessId, @environment, @createdAt, @lastSeenAt, @expiresAt)`,
      ),
      find: db.prepare<[Buffer], PortalSessionRow>('SELECT * FROM portal_sessions WHERE id_hash = ?'),
      touch: db.prepare<[number, Buffer]>('UPDATE portal_sessions SET last_seen_at = ? WHERE id_hash = ?'),
      setEnvironment: db.prepare<[string, Buffer]>(
        'UPDATE portal_sessions SET environment = ? WHERE id_hash = ?',
      ),
      remove: db.prepare<[Buffer]>('DELETE FROM portal_sessions WHERE id_hash = ?'),
      prune: db.prepare<[number]>('DELETE FROM portal_sessions WHERE expires_at <= ?'),
    };
  }

  insert(session: PortalSessionRecord): void {
    this.statements.insert.run(session);
  }

  find(idHash: Buffer): PortalSessionRecord | undefined {
    const row = this.statements.find.get(idHash);
    return row && toPortalSession(row);
  }

  touch(idHash: Buffer, at: number): void {
    this.statements.touch.run(at, idHash);
  }

  setEnvironment(idHash: Buffer, environment: Environment): void {
    this.statements.setEnvironment.run(environment, idHash);
  }

  remove(idHash: Buffer): void {
    this.statements.remove.run(idHash);
  }

  /** Deletes sessions past their absolute end. */
  prune(now: number): void {
    this.statements.prune.run(now);
  }
}
