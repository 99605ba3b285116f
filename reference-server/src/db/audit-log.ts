import type { Environment } from '@servicepay/node/protocol';
import { newId } from '../internal/random.ts';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

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
  | 'credit.refund_refused'
  | 'refund.requested'
  | 'refund.succeeded'
  | 'refund.failed'
  | 'payment_link.created'
  | 'payment_link.updated';

/** `audit_log`: who did what to which object, and when. Never a secret. Append only. */
export const auditLog = table('audit_log', {
  seq: column.serial(),
  id: column.text(),
  at: column.int(),
  /**
   * `cli:<os user>`, `secret_key:<environment>`, `portal:<key id>` (the developer portal), `widget_token`
   * (the payer's checkout), or `service`.
   */
  actor: column.text(),
  action: column.text<AuditAction>(),
  businessId: column.nullable(column.text()),
  environment: column.nullable(column.text<Environment>()),
  /** The id of what was acted on: a key hint, an endpoint, a session, a credit. */
  target: column.nullable(column.text()),
  details: column.json<Record<string, unknown>>(),
});

export type AuditEntry = RecordOf<typeof auditLog.columns>;

/**
 * The append-only audit log. Entries are written in the same transaction as the change they record, so an
 * entry exists exactly when its change does.
 */
export interface AuditLogRepository {
  record(entry: Omit<AuditEntry, 'seq' | 'id'>): Promise<void>;
  /** Oldest first, optionally one business's. */
  list(query: { businessId?: string | undefined; limit: number }): Promise<AuditEntry[]>;
}

const statements = {
  insert: sql(auditLog.insert()),
  list: sql<AuditEntry>(
    `SELECT ${auditLog.select()} FROM audit_log
     WHERE (CAST(@businessId AS text) IS NULL OR business_id = @businessId) ORDER BY seq LIMIT @limit`,
  ),
};

/**
 * `AuditLogRepository` on either store.
 *
 * @example
 * await new SqlAuditLogRepository(runner).record({ at: now, actor: 'cli:ops', action: 'kyc.approved', businessId,
 *   environment: null, target: businessId, details: {} });
 */
export class SqlAuditLogRepository implements AuditLogRepository {
  constructor(private readonly db: SqlRunner) {}

  async record(entry: Omit<AuditEntry, 'seq' | 'id'>): Promise<void> {
    await this.db.run(statements.insert, auditLog.encode({ ...entry, id: newId('aud') }));
  }

  async list(query: { businessId?: string | undefined; limit: number }): Promise<AuditEntry[]> {
    const rows = await this.db.all(statements.list, {
      businessId: query.businessId ?? null,
      limit: query.limit,
    });
    return rows.map((row) => auditLog.decode(row));
  }
}
