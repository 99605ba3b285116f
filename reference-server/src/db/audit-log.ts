import type { Environment } from '@servicepay/node/protocol';
import { newId } from '../internal/random.ts';
import type { SqliteDatabase } from './database.ts';

/** What an audit entry records. */
export type AuditAction =
  | 'api_key.rolled'
  | 'kyc.approved'
  | 'webhook_endpoint.created'
  | 'webhook_endpoint.updated'
  | 'webhook_endpoint.deleted'
  | 'webhook_endpoint.secret_rolled'
  | 'session.cancelled'
  | 'session.expired_by_test_helper'
  | 'account.expired_by_test_helper'
  | 'credit.refunded'
  | 'credit.refund_refused';

/** One entry of the audit log: who did what to which object, and when. Never a secret. */
export interface AuditEntry {
  seq: number;
  id: string;
  at: number;
  /** `cli:<os user>`, `secret_key:<environment>`, `widget_token` (the payer's checkout), or `service`. */
  actor: string;
  action: AuditAction;
  businessId: string | null;
  environment: Environment | null;
  /** The id of what was acted on: a key hint, an endpoint, a session, a credit. */
  target: string | null;
  details: Record<string, unknown>;
}

type Row = {
  seq: number;
  id: string;
  at: number;
  actor: string;
  action: AuditAction;
  business_id: string | null;
  environment: Environment | null;
  target: string | null;
  details: string;
};

const toEntry = (row: Row): AuditEntry => ({
  seq: row.seq,
  id: row.id,
  at: row.at,
  actor: row.actor,
  action: row.action,
  businessId: row.business_id,
  environment: row.environment,
  target: row.target,
  details: JSON.parse(row.details) as Record<string, unknown>,
});

/**
 * The append-only audit log. Entries are written in the same transaction as the change they record, so an
 * entry exists exactly when its change does.
 *
 * @example
 * audit.record({ at: now, actor: 'cli:ops', action: 'kyc.approved', businessId, environment: null,
 *   target: businessId, details: {} });
 */
export class AuditLogRepository {
  private readonly insertStatement;
  private readonly listStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO audit_log (id, at, actor, action, business_id, environment, target, details)
       VALUES (@id, @at, @actor, @action, @businessId, @environment, @target, @details)`,
    );
    this.listStatement = db.prepare<{ businessId: string | null; limit: number }, Row>(
      `SELECT * FROM audit_log WHERE (@businessId IS NULL OR business_id = @businessId) ORDER BY seq LIMIT @limit`,
    );
  }

  record(entry: Omit<AuditEntry, 'seq' | 'id'>): void {
    this.insertStatement.run({ ...entry, id: newId('aud'), details: JSON.stringify(entry.details) });
  }

  /** Oldest first, optionally one business's. */
  list(query: { businessId?: string | undefined; limit: number }): AuditEntry[] {
    return this.listStatement.all({ businessId: query.businessId ?? null, limit: query.limit }).map(toEntry);
  }
}
