import { toUnappliedCreditView } from './bank/unapplied-credits.ts';
import type { Store } from './db/store.ts';
import { toRefundView } from './refunds/refund-views.ts';

/** What an operator's list command was asked for (`servicepay-server … list`). */
export interface OperatorListQuery {
  businessId?: string | undefined;
  sessionId?: string | undefined;
  limit: number;
  /** One JSON array instead of a line per row. */
  json: boolean;
}

/** `rows` as one JSON array, or each as its line, or `none` when there are none: what the command prints. */
function print<T>(rows: T[], query: OperatorListQuery, none: string, line: (row: T) => string): string {
  if (query.json) return JSON.stringify(rows);
  return rows.length === 0 ? none : rows.map(line).join('\n');
}

/**
 * `servicepay-server credits list`, as it prints: credits the service could not apply, oldest first.
 *
 * @example
 * console.log(await listCredits(store, { limit: 100, json: false }));
 */
export async function listCredits(store: Store, query: OperatorListQuery): Promise<string> {
  const credits = await store.unappliedCredits.list({ businessId: query.businessId, limit: query.limit });
  const rows = credits.map((credit) => ({
    ...toUnappliedCreditView(credit),
    businessId: credit.businessId,
    environment: credit.environment,
    sessionId: credit.sessionId,
  }));
  return print(
    rows,
    query,
    'No unapplied credits.',
    (row) =>
      `${row.createdAt}  ${row.id}  ${row.amount} ${row.currency}  ${row.reason}  ${row.refundStatus}${row.refundId ? ` ${row.refundId}` : ''}  transfer ${row.transferId}  session ${row.sessionId ?? '-'}  business ${row.businessId ?? '-'}`,
  );
}

/**
 * `servicepay-server audit list`, as it prints: who did what, oldest first.
 *
 * @example
 * console.log(await listAudit(store, { businessId: 'biz_…', limit: 100, json: true }));
 */
export async function listAudit(store: Store, query: OperatorListQuery): Promise<string> {
  const entries = await store.auditLog.list({ businessId: query.businessId, limit: query.limit });
  const rows = entries.map(({ seq: _seq, at, ...entry }) => ({ ...entry, at: new Date(at).toISOString() }));
  return print(
    rows,
    query,
    'No audit entries.',
    (row) =>
      `${row.at}  ${row.actor}  ${row.action}  ${row.target ?? '-'}  business ${row.businessId ?? '-'}${row.environment ? ` (${row.environment})` : ''}  ${JSON.stringify(row.details)}`,
  );
}

/**
 * `servicepay-server refunds list`, as it prints: merchants' refunds, newest first, with who asked and the transfer whose
 * payer they go back to.
 *
 * @example
 * console.log(await listRefunds(store, { sessionId: 'ses_…', limit: 100, json: false }));
 */
export async function listRefunds(store: Store, query: OperatorListQuery): Promise<string> {
  const refunds = await store.refunds.recent(query);
  const rows = refunds.map((refund) => ({
    ...toRefundView(refund),
    businessId: refund.businessId,
    transferId: refund.transferId,
    requestedBy: refund.requestedBy,
  }));
  return print(
    rows,
    query,
    'No refunds.',
    (row) =>
      `${row.createdAt}  ${row.id}  ${row.amount} ${row.currency}  ${row.status}${row.failureReason ? ` (${row.failureReason})` : ''}  session ${row.sessionId}  transfer ${row.transferId}  business ${row.businessId} (${row.environment})  by ${row.requestedBy}`,
  );
}
