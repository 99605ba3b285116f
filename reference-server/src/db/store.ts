import { ApiKeyRepository } from './api-keys.ts';
import { AuditLogRepository } from './audit-log.ts';
import { BankNotificationRepository } from './bank-notifications.ts';
import { BusinessRepository } from './businesses.ts';
import type { SqliteDatabase } from './database.ts';
import { EventRepository } from './events.ts';
import { IdempotencyKeyRepository } from './idempotency-keys.ts';
import { PortalSessionRepository } from './portal-sessions.ts';
import { SessionRepository } from './sessions.ts';
import { SettledTransferRepository } from './settled-transfers.ts';
import { UnappliedCreditRepository } from './unapplied-credits.ts';
import { VirtualAccountRepository } from './virtual-accounts.ts';
import { WidgetTokenRepository } from './widget-tokens.ts';
import { WriteQueue } from './write-queue.ts';

/** The service's repositories over one connection, and the write queue every request's write goes through. */
export interface Store {
  db: SqliteDatabase;
  writes: WriteQueue;
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
  auditLog: AuditLogRepository;
}

export function createStore(db: SqliteDatabase, onEffectError: (error: unknown) => void): Store {
  return {
    db,
    writes: new WriteQueue(db, onEffectError),
    businesses: new BusinessRepository(db),
    apiKeys: new ApiKeyRepository(db),
    sessions: new SessionRepository(db),
    virtualAccounts: new VirtualAccountRepository(db),
    widgetTokens: new WidgetTokenRepository(db),
    idempotencyKeys: new IdempotencyKeyRepository(db),
    bankNotifications: new BankNotificationRepository(db),
    events: new EventRepository(db),
    portalSessions: new PortalSessionRepository(db),
    settledTransfers: new SettledTransferRepository(db),
    unappliedCredits: new UnappliedCreditRepository(db),
    auditLog: new AuditLogRepository(db),
  };
}
