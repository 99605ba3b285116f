import { ApiKeyRepository } from './api-keys.ts';
import { AuditLogRepository } from './audit-log.ts';
import { BankNotificationRepository } from './bank-notifications.ts';
import { BusinessRepository } from './businesses.ts';
import type { SqliteDatabase } from './database.ts';
import { EventRepository } from './events.ts';
import { IdempotencyKeyRepository } from './idempotency-keys.ts';
import { PortalSessionRepository } from './portal-sessions.ts';
import { asyncView, type Repositories, type Writes } from './repositories.ts';
import { SessionRepository } from './sessions.ts';
import { SettledTransferRepository } from './settled-transfers.ts';
import { UnappliedCreditRepository } from './unapplied-credits.ts';
import { VirtualAccountRepository } from './virtual-accounts.ts';
import { WebhookDeliveryRepository } from './webhook-deliveries.ts';
import { WebhookEndpointRepository } from './webhook-endpoints.ts';
import { WidgetTokenRepository } from './widget-tokens.ts';
import { WriteQueue } from './write-queue.ts';

/**
 * The service's storage, whichever database is behind it: the repositories for reads, and `writes`, the
 * queue every write goes through (a job gets the repositories bound to its transaction).
 */
export interface Store extends Repositories {
  writes: Writes<Repositories>;
  /**
   * Resolves when the database answers one trivial query, rejects when it does not (`GET /health`). On
   * PostgreSQL: `SELECT 1` through the pool, given up after 2 s (waiting for a connection included), one query
   * in flight at a time however many callers ask; on SQLite: a statement on the open handle.
   */
  ping(): Promise<void>;
  /**
   * Resolves once one small write that needs new space on disk has been committed, rejects with the store's
   * error when it cannot be (`storageFull` tells a full disk): how `StorageHealth` finds out that space is back.
   * On SQLite: a counter bumped through the write queue (each commit appends to the WAL); on PostgreSQL: a row
   * in a fresh temporary table (a new file in the database's tablespace), rolled back.
   */
  probeWrite(): Promise<void>;
}

/** The embedded store: one SQLite connection; its handle stays reachable for the CLI, tests and benches. */
export interface SqliteStore extends Store {
  db: SqliteDatabase;
}

/**
 * @example
 * const store = createStore(openDatabase(path), (error) => logger.error('after-commit effect failed', { error }));
 * const session = await store.sessions.find('ses_…');
 */
export function createStore(
  db: SqliteDatabase,
  onEffectError: (error: unknown) => void,
  /** Told after each committed batch of writes (the service's `WalCheckpointer`). */
  afterCommit?: () => void,
): SqliteStore {
  const repositories: Repositories = {
    businesses: asyncView(new BusinessRepository(db)),
    apiKeys: asyncView(new ApiKeyRepository(db)),
    sessions: asyncView(new SessionRepository(db)),
    virtualAccounts: asyncView(new VirtualAccountRepository(db)),
    widgetTokens: asyncView(new WidgetTokenRepository(db)),
    idempotencyKeys: asyncView(new IdempotencyKeyRepository(db)),
    bankNotifications: asyncView(new BankNotificationRepository(db)),
    events: asyncView(new EventRepository(db)),
    portalSessions: asyncView(new PortalSessionRepository(db)),
    settledTransfers: asyncView(new SettledTransferRepository(db)),
    unappliedCredits: asyncView(new UnappliedCreditRepository(db)),
    auditLog: asyncView(new AuditLogRepository(db)),
    webhookEndpoints: asyncView(new WebhookEndpointRepository(db)),
    webhookDeliveries: asyncView(new WebhookDeliveryRepository(db)),
  };
  const probe = db.prepare('SELECT 1');
  const bumpProbe = db.prepare('UPDATE storage_probe SET probes = probes + 1 WHERE only_row = 1');
  const writes = new WriteQueue(db, repositories, onEffectError, undefined, afterCommit);
  return {
    ...repositories,
    db,
    writes,
    // Throws once the handle is closed ("The database connection is not open").
    ping: async () => {
      probe.get();
    },
    probeWrite: () =>
      writes.run(async () => {
        bumpProbe.run();
      }),
  };
}
