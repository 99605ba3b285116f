import type { Environment } from '@servicepay/node/protocol';
import { newId } from '../../internal/random.ts';
import type { AuditAction, AuditEntry, AuditLogRepository } from '../audit-log.ts';
import type { Async } from '../repositories.ts';
import { exactInteger } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

type Row = {
  seq: string;
  id: string;
  at: string;
  actor: string;
  action: AuditAction;
  business_id: string | null;
  environment: Environment | null;
  target: string | null;
  details: string;
};

const toEntry = (row: Row): AuditEntry => ({
  seq: exactInteger(row.seq),
  id: row.id,
  at: exactInteger(row.at),
  actor: row.actor,
  action: row.action,
  businessId: row.business_id,
  environment: row.environment,
  target: row.target,
  details: JSON.parse(row.details) as Record<string, unknown>,
});

/**
 * The append-only audit log on PostgreSQL: the twin of the SQLite `AuditLogRepository`. Given the client of
 * the transaction that makes the change, an entry commits exactly when its change does.
 *
 * @example
 * await new PostgresAuditLogRepository(client).record({ at: now, actor: 'cli:ops', action: 'kyc.approved',
 *   businessId, environment: null, target: businessId, details: {} });
 */
export class PostgresAuditLogRepository implements Async<AuditLogRepository> {
  constructor(private readonly db: Queryable) {}

  async record(entry: Omit<AuditEntry, 'seq' | 'id'>): Promise<void> {
    await this.db.query(
      `INSERT INTO audit_log (id, at, actor, action, business_id, environment, target, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        newId('aud'),
        entry.at,
        entry.actor,
        entry.action,
        entry.businessId,
        entry.environment,
        entry.target,
        JSON.stringify(entry.details),
      ],
    );
  }

  /** Oldest first, optionally one business's. */
  async list(query: { businessId?: string | undefined; limit: number }): Promise<AuditEntry[]> {
    const { rows } = await runQuery<Row>(
      this.db,
      `SELECT * FROM audit_log WHERE ($1::text IS NULL OR business_id = $1) ORDER BY seq LIMIT $2`,
      [query.businessId ?? null, query.limit],
    );
    return rows.map(toEntry);
  }
}
