import {
  type NotificationAbout,
  type NotificationContext,
  SqlBankNotificationRepository,
} from '../bank-notifications.ts';
import { sessions } from '../sessions.ts';
import { sql } from '../sql.ts';
import { virtualAccounts } from '../virtual-accounts.ts';

/**
 * One row whatever exists: the two recorded results as subqueries, the account and its session outer-joined
 * to it, each joined table's answers under a prefix of their own (`Table.select(alias, as)`).
 */
const findContext = sql<Record<string, unknown>>(
  `SELECT (SELECT result FROM bank_notifications WHERE id = @id) AS "known",
     (SELECT result FROM settled_transfers WHERE transfer_id = @transferId) AS "settled",
     ${virtualAccounts.select('va', 'account.')}, ${sessions.select('s', 'session.')}
   FROM (SELECT 1 AS one) AS here
   LEFT JOIN virtual_accounts va ON va.account_number = @accountNumber
   LEFT JOIN sessions s ON s.id = va.session_id`,
);

/**
 * Bank notifications on PostgreSQL, whose `findContext` reads everything a notification's decision needs in one
 * statement: they were four round trips inside the payment's transaction, on the way to the payer's push
 * (issue 38). One snapshot for the four, where four statements took one each; the decision is the same.
 *
 * @example
 * const { known, settled, account, session } = await new PostgresBankNotificationRepository(runner).findContext(about);
 */
export class PostgresBankNotificationRepository extends SqlBankNotificationRepository {
  async findContext(about: NotificationAbout): Promise<NotificationContext> {
    const row = (await this.db.get(findContext, { ...about })) ?? {};
    return {
      known: (row.known ?? undefined) as NotificationContext['known'],
      settled: (row.settled ?? undefined) as NotificationContext['settled'],
      account: virtualAccounts.decodePrefixed(row, 'account.'),
      session: sessions.decodePrefixed(row, 'session.'),
    };
  }
}
