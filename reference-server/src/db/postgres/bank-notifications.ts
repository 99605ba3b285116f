import type { QueryResult } from 'pg';
import type { BankNotificationRecord, NotificationResult } from '../bank-notifications.ts';
import type { Repositories } from '../repositories.ts';
import type { Queryable } from './notification-channel.ts';

/** What the service calls: `Repositories['bankNotifications']` (a class cannot implement an indexed type directly). */
type BankNotificationsContract = Repositories['bankNotifications'];

/**
 * The PostgreSQL twin of `BankNotificationRepository` (`../bank-notifications.ts`): every bank notification
 * the service processed, once per notification id. A second insert of an id already recorded is refused
 * (the primary key: a unique violation, SQLSTATE 23505), as SQLite refuses it, rather than skipped: a caller
 * that raced another instance to the same notification must see that it lost, and its transaction roll back,
 * not carry on as if its record were the one kept.
 *
 * @example
 * const notifications = new PostgresBankNotificationRepository(pool);
 * const seen = await notifications.findResult('ntf_1'); // 'credited' | … | undefined
 */
export class PostgresBankNotificationRepository implements BankNotificationsContract {
  constructor(private readonly db: Queryable) {}

  async insert(record: BankNotificationRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO bank_notifications
         (id, transfer_id, account_number, session_id, amount, currency, bank_outcome, result, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        record.id,
        record.transferId,
        record.accountNumber,
        record.sessionId,
        record.amount,
        record.currency,
        record.bankOutcome,
        record.result,
        record.receivedAt,
      ],
    );
  }

  /** The result recorded for a notification id already processed. */
  async findResult(id: string): Promise<NotificationResult | undefined> {
    const result = (await this.db.query('SELECT result FROM bank_notifications WHERE id = $1', [
      id,
    ])) as QueryResult<{ result: NotificationResult }>;
    return result.rows[0]?.result;
  }
}
