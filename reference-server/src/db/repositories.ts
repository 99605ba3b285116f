import { type ApiKeyRepository, SqlApiKeyRepository } from './api-keys.ts';
import { type AuditLogRepository, SqlAuditLogRepository } from './audit-log.ts';
import {
  type BalanceTransactionRepository,
  SqlBalanceTransactionRepository,
} from './balance-transactions.ts';
import { type BankNotificationRepository, SqlBankNotificationRepository } from './bank-notifications.ts';
import { type BusinessRepository, SqlBusinessRepository } from './businesses.ts';
import { type EventRepository, SqlEventRepository } from './events.ts';
import { type ExportPageRepository, SqlExportPageRepository } from './export-pages.ts';
import { type IdempotencyKeyRepository, SqlIdempotencyKeyRepository } from './idempotency-keys.ts';
import { type PaymentLinkRepository, SqlPaymentLinkRepository } from './payment-links.ts';
import { type PortalSessionRepository, SqlPortalSessionRepository } from './portal-sessions.ts';
import { type RefundRepository, SqlRefundRepository } from './refunds.ts';
import { type RequestLogRepository, SqlRequestLogRepository } from './request-log.ts';
import { type SessionRepository, SqlSessionRepository } from './sessions.ts';
import { type SettledTransferRepository, SqlSettledTransferRepository } from './settled-transfers.ts';
import type { SqlRunner } from './sql.ts';
import { SqlUnappliedCreditRepository, type UnappliedCreditRepository } from './unapplied-credits.ts';
import { SqlVirtualAccountRepository, type VirtualAccountRepository } from './virtual-accounts.ts';
import {
  SqlWebhookDeliveryRepository,
  type WebhookDeliveryOptions,
  type WebhookDeliveryRepository,
} from './webhook-deliveries.ts';
import { SqlWebhookEndpointRepository, type WebhookEndpointRepository } from './webhook-endpoints.ts';
import { SqlWidgetTokenRepository, type WidgetTokenRepository } from './widget-tokens.ts';

/**
 * Every repository of the service, whichever store is behind it: the contract the service is written against.
 * Each repository's interface is declared beside its table (`db/<name>.ts`); every method answers a promise.
 * A write job gets them bound to its transaction.
 */
export interface Repositories {
  businesses: BusinessRepository;
  apiKeys: ApiKeyRepository;
  sessions: SessionRepository;
  virtualAccounts: VirtualAccountRepository;
  widgetTokens: WidgetTokenRepository;
  idempotencyKeys: IdempotencyKeyRepository;
  bankNotifications: BankNotificationRepository;
  events: EventRepository;
  portalSessions: PortalSessionRepository;
  settledTransfers: SettledTransferRepository;
  unappliedCredits: UnappliedCreditRepository;
  refunds: RefundRepository;
  balanceTransactions: BalanceTransactionRepository;
  auditLog: AuditLogRepository;
  webhookEndpoints: WebhookEndpointRepository;
  webhookDeliveries: WebhookDeliveryRepository;
  requestLog: RequestLogRepository;
  paymentLinks: PaymentLinkRepository;
  /** The keyset pages the sessions export streams (issue 37; the ledger export reads `balanceTransactions`). */
  exportPages: ExportPageRepository;
}

/**
 * Every repository over one runner: a SQLite connection, the PostgreSQL pool (reads, each its own statement),
 * or a write job's PostgreSQL client.
 *
 * @example
 * const repositories = repositoriesOn(new SqliteRunner(db));
 */
export function repositoriesOn(db: SqlRunner, options: WebhookDeliveryOptions = {}): Repositories {
  return {
    businesses: new SqlBusinessRepository(db),
    apiKeys: new SqlApiKeyRepository(db),
    sessions: new SqlSessionRepository(db),
    virtualAccounts: new SqlVirtualAccountRepository(db),
    widgetTokens: new SqlWidgetTokenRepository(db),
    idempotencyKeys: new SqlIdempotencyKeyRepository(db),
    bankNotifications: new SqlBankNotificationRepository(db),
    events: new SqlEventRepository(db),
    portalSessions: new SqlPortalSessionRepository(db),
    settledTransfers: new SqlSettledTransferRepository(db),
    unappliedCredits: new SqlUnappliedCreditRepository(db),
    refunds: new SqlRefundRepository(db),
    balanceTransactions: new SqlBalanceTransactionRepository(db),
    auditLog: new SqlAuditLogRepository(db),
    webhookEndpoints: new SqlWebhookEndpointRepository(db),
    webhookDeliveries: new SqlWebhookDeliveryRepository(db, options),
    requestLog: new SqlRequestLogRepository(db),
    paymentLinks: new SqlPaymentLinkRepository(db),
    exportPages: new SqlExportPageRepository(db),
  };
}

/** Handed to each write job: work to run only once the job's writes are durable (push, bank calls). */
export interface WriteContext {
  afterCommit(effect: () => void): void;
  /**
   * On PostgreSQL: `send` runs once the job has returned, on the job's own connection inside its transaction,
   * and what it sends leaves with the job's `COMMIT`, in the same round trip (the connection pipelines). For a
   * statement whose answer the job does not need and that must commit or roll back with it: the push `NOTIFY`
   * of a transition, which PostgreSQL delivers exactly at commit. A statement PostgreSQL refuses aborts the
   * transaction (its `COMMIT` then rolls back and the job fails); one the driver refuses before sending does
   * not, so `send` must handle its own promise's rejection. Undefined for a job run `oneStatement` (no `COMMIT`)
   * and on SQLite, where there is nothing to send but `afterCommit` effects.
   */
  readonly beforeCommit?: (
    send: (connection: { query(text: string, values?: unknown[]): Promise<unknown> }) => Promise<void>,
  ) => void;
}

/**
 * Where every write of the running service goes: `run` executes `work` in one transaction with the
 * repositories `R` bound to it, and settles only after the commit (or the rollback: the job's error). A job
 * does store work only (no network, no timers): on SQLite a batch of jobs shares one transaction and one turn
 * of the event loop; on PostgreSQL a job holds a connection and may be run again after a serialization
 * failure, so it must not have effects outside the store except through `afterCommit`.
 *
 * @example
 * const session = await store.writes.run(async (tx, context) => {
 *   const current = await tx.sessions.find(id);
 *   ...
 *   context.afterCommit(() => broadcaster.publish(update));
 *   return current;
 * });
 */
export interface Writes<R = Repositories> {
  run<T>(work: (tx: R, context: WriteContext) => Promise<T>, options?: WriteOptions): Promise<T>;
}

/** How a write job may be run. */
export interface WriteOptions {
  /**
   * The job sends at most one statement. On PostgreSQL it then runs without `BEGIN` and `COMMIT` (a statement
   * sent alone is its own transaction, atomic and durable when answered): one round trip instead of three. A
   * second statement is refused, and fails the job. SQLite ignores it (its jobs share a batch's transaction).
   * *Why:* the session create is one statement there (issue 38), and round trips are most of its cost.
   */
  oneStatement?: boolean;
}
