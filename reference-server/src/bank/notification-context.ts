import type { NotificationAbout, NotificationContext } from '../db/bank-notifications.ts';
import type { Repositories } from '../db/repositories.ts';

/**
 * A notification's `NotificationContext` on either store: the repository's one statement where it has one
 * (`findContext`, PostgreSQL), else each repository's own read. On SQLite one joined statement measured slower
 * than the four reads (45 against 10 µs a call: SQLite reads a row joining the account and its session far more
 * slowly than the two lookups apart), and there a read is a function call, not a round trip.
 *
 * @example
 * const { known, settled, account, session } = await notificationContext(tx, { id, transferId, accountNumber });
 */
export async function notificationContext(
  tx: Pick<Repositories, 'bankNotifications' | 'settledTransfers' | 'virtualAccounts' | 'sessions'>,
  about: NotificationAbout,
): Promise<NotificationContext> {
  if (tx.bankNotifications.findContext) return tx.bankNotifications.findContext(about);
  const account = await tx.virtualAccounts.find(about.accountNumber);
  return {
    known: await tx.bankNotifications.findResult(about.id),
    settled: await tx.settledTransfers.findResult(about.transferId),
    account,
    session: account && (await tx.sessions.find(account.sessionId)),
  };
}
