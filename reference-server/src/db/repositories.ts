import type { ApiKeyRepository } from './api-keys.ts';
import type { AuditLogRepository } from './audit-log.ts';
import type { BankNotificationRepository } from './bank-notifications.ts';
import type { BusinessRepository } from './businesses.ts';
import type { EventRepository } from './events.ts';
import type { IdempotencyKeyRepository } from './idempotency-keys.ts';
import type { PortalSessionRepository } from './portal-sessions.ts';
import type { SessionRepository } from './sessions.ts';
import type { SettledTransferRepository } from './settled-transfers.ts';
import type { UnappliedCreditRepository } from './unapplied-credits.ts';
import type { VirtualAccountRepository } from './virtual-accounts.ts';
import type { WebhookDeliveryRepository } from './webhook-deliveries.ts';
import type { WebhookEndpointRepository } from './webhook-endpoints.ts';
import type { WidgetTokenRepository } from './widget-tokens.ts';

/**
 * A repository as the service calls it, whichever store is behind it: the public methods of the SQLite
 * repository `T`, each answering a promise. The SQLite classes define the shape (their statements run
 * synchronously and `asyncView` wraps them); the PostgreSQL repositories implement `Async<T>` directly.
 * Methods only meaningful to one dialect (`explainList`) are left out with `Omit`.
 */
export type Async<T> = {
  [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] extends (
    ...args: infer A
  ) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** Every repository of the service. A write job gets them bound to its transaction. */
export interface Repositories {
  businesses: Async<BusinessRepository>;
  apiKeys: Async<ApiKeyRepository>;
  sessions: Async<Omit<SessionRepository, 'explainList'>>;
  virtualAccounts: Async<VirtualAccountRepository>;
  widgetTokens: Async<WidgetTokenRepository>;
  idempotencyKeys: Async<IdempotencyKeyRepository>;
  bankNotifications: Async<BankNotificationRepository>;
  events: Async<EventRepository>;
  portalSessions: Async<PortalSessionRepository>;
  settledTransfers: Async<SettledTransferRepository>;
  unappliedCredits: Async<UnappliedCreditRepository>;
  auditLog: Async<AuditLogRepository>;
  webhookEndpoints: Async<WebhookEndpointRepository>;
  webhookDeliveries: Async<WebhookDeliveryRepository>;
}

/**
 * The SQLite repository `repo` seen through `Async<T>`: each method runs its statement synchronously, as
 * before, and hands back a settled promise (a throw becomes a rejection), so a write job on SQLite never
 * waits on anything but its own statements and its batch still runs in one turn of the event loop.
 */
export function asyncView<T extends object>(repo: T): Async<T> {
  const view: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(repo))) {
    const method = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(repo), name)?.value;
    if (name === 'constructor' || typeof method !== 'function') continue;
    view[name] = (...args: unknown[]) => {
      try {
        return Promise.resolve(method.apply(repo, args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return view as Async<T>;
}

/** Handed to each write job: work to run only once the job's writes are durable (push, bank calls). */
export interface WriteContext {
  afterCommit(effect: () => void): void;
  /**
   * On PostgreSQL, the job's own connection, inside its transaction: a statement sent on it commits or rolls
   * back with the job (the push `NOTIFY` of a transition, so that it leaves exactly at commit). Undefined on
   * SQLite, where there is nothing to send but `afterCommit` effects.
   */
  readonly connection?: { query(text: string, values?: unknown[]): Promise<unknown> };
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
  run<T>(work: (tx: R, context: WriteContext) => Promise<T>): Promise<T>;
}
