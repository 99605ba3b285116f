import type { Environment } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** `portal_sessions`: a developer signed in to the portal, looked up by the hash of its cookie. */
export const portalSessions = table('portal_sessions', {
  /** SHA-256 of the cookie's random id: the id itself is never stored. */
  idHash: column.bytes(),
  businessId: column.text(),
  /** The secret key that opened the session (or that its session moved to when it rolled that key). */
  apiKeyId: column.text(),
  /** The environment of the key that opened the session: the only one it reads or changes, for its life. */
  environment: column.text<Environment>(),
  createdAt: column.int(),
  lastSeenAt: column.int(),
  /** Absolute end; the idle limit is checked against `lastSeenAt`. */
  expiresAt: column.int(),
});

export type PortalSessionRecord = RecordOf<typeof portalSessions.columns>;

/** A session as found, with whether the key behind it has been rolled since. */
export interface FoundPortalSession extends PortalSessionRecord {
  keyRevokedAt: number | null;
}

/** Portal sign-ins as the service reads and writes them. */
export interface PortalSessionRepository {
  insert(session: PortalSessionRecord): Promise<void>;
  find(idHash: Buffer): Promise<FoundPortalSession | undefined>;
  touch(idHash: Buffer, at: number): Promise<void>;
  /** Moves a session to another key of its business (the one that replaced the key it was opened with). */
  rebind(idHash: Buffer, apiKeyId: string): Promise<void>;
  remove(idHash: Buffer): Promise<void>;
  /** Deletes sessions past their absolute end. */
  prune(now: number): Promise<void>;
}

const statements = {
  insert: sql(portalSessions.insert()),
  find: sql<FoundPortalSession>(
    `SELECT ${portalSessions.select('s')}, k.revoked_at AS "keyRevokedAt" FROM portal_sessions s
     JOIN api_keys k ON k.id = s.api_key_id WHERE s.id_hash = @idHash`,
  ),
  rebind: sql('UPDATE portal_sessions SET api_key_id = @apiKeyId WHERE id_hash = @idHash'),
  touch: sql('UPDATE portal_sessions SET last_seen_at = @at WHERE id_hash = @idHash'),
  remove: sql('DELETE FROM portal_sessions WHERE id_hash = @idHash'),
  prune: sql('DELETE FROM portal_sessions WHERE expires_at <= @now'),
};

/**
 * `PortalSessionRepository` on either store.
 *
 * @example
 * await portal.insert({ idHash: sha256(cookieId), businessId, apiKeyId, environment: 'test', createdAt: now,
 *   lastSeenAt: now, expiresAt: now + 8 * 3_600_000 });
 * (await portal.find(sha256(cookieId)))?.businessId;
 */
export class SqlPortalSessionRepository implements PortalSessionRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(session: PortalSessionRecord): Promise<void> {
    await this.db.run(statements.insert, session);
  }

  async find(idHash: Buffer): Promise<FoundPortalSession | undefined> {
    return this.db.get(statements.find, { idHash });
  }

  async touch(idHash: Buffer, at: number): Promise<void> {
    await this.db.run(statements.touch, { idHash, at });
  }

  async rebind(idHash: Buffer, apiKeyId: string): Promise<void> {
    await this.db.run(statements.rebind, { idHash, apiKeyId });
  }

  async remove(idHash: Buffer): Promise<void> {
    await this.db.run(statements.remove, { idHash });
  }

  async prune(now: number): Promise<void> {
    await this.db.run(statements.prune, { now });
  }
}
