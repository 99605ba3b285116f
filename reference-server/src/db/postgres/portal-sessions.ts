import type { Environment } from '@servicepay/node/protocol';
import type { FoundPortalSession, PortalSessionRecord, PortalSessionRepository } from '../portal-sessions.ts';
import type { Async } from '../repositories.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

type PortalSessionRow = {
  id_hash: Buffer;
  business_id: string;
  api_key_id: string;
  key_revoked_at: string | null;
  environment: Environment;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
};

const toPortalSession = (row: PortalSessionRow): FoundPortalSession => ({
  idHash: row.id_hash,
  businessId: row.business_id,
  apiKeyId: row.api_key_id,
  keyRevokedAt: exactIntegerOrNull(row.key_revoked_at),
  environment: row.environment,
  createdAt: exactInteger(row.created_at),
  lastSeenAt: exactInteger(row.last_seen_at),
  expiresAt: exactInteger(row.expires_at),
});

/**
 * `portal_sessions` on PostgreSQL: the twin of the SQLite `PortalSessionRepository`. Only the SHA-256 of the
 * cookie's id is stored (`bytea` primary key).
 *
 * @example
 * const portal = new PostgresPortalSessionRepository(pool);
 * await portal.insert({ idHash: sha256(cookieId), businessId, apiKeyId, environment: 'test', createdAt: now, lastSeenAt: now, expiresAt: now + 8 * 3_600_000 });
 * (await portal.find(sha256(cookieId)))?.businessId;
 */
export class PostgresPortalSessionRepository implements Async<PortalSessionRepository> {
  constructor(private readonly db: Queryable) {}

  async insert(session: PortalSessionRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO portal_sessions (id_hash, business_id, api_key_id, environment, created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        session.idHash,
        session.businessId,
        session.apiKeyId,
        session.environment,
        session.createdAt,
        session.lastSeenAt,
        session.expiresAt,
      ],
    );
  }

  async find(idHash: Buffer): Promise<FoundPortalSession | undefined> {
    const { rows } = await runQuery<PortalSessionRow>(
      this.db,
      `SELECT s.*, k.revoked_at AS key_revoked_at FROM portal_sessions s
       JOIN api_keys k ON k.id = s.api_key_id WHERE s.id_hash = $1`,
      [idHash],
    );
    return rows[0] && toPortalSession(rows[0]);
  }

  async touch(idHash: Buffer, at: number): Promise<void> {
    await this.db.query('UPDATE portal_sessions SET last_seen_at = $1 WHERE id_hash = $2', [at, idHash]);
  }

  /** Moves a session to another key of its business (the one that replaced the key it was opened with). */
  async rebind(idHash: Buffer, apiKeyId: string): Promise<void> {
    await this.db.query('UPDATE portal_sessions SET api_key_id = $1 WHERE id_hash = $2', [apiKeyId, idHash]);
  }

  async remove(idHash: Buffer): Promise<void> {
    await this.db.query('DELETE FROM portal_sessions WHERE id_hash = $1', [idHash]);
  }

  /** Deletes sessions past their absolute end. */
  async prune(now: number): Promise<void> {
    await this.db.query('DELETE FROM portal_sessions WHERE expires_at <= $1', [now]);
  }
}
