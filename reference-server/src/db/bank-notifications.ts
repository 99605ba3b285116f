import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** What the service made of a bank notification. */
export type NotificationResult = 'credited' | 'mismatch' | 'not_credited' | 'unapplied' | 'unknown_account';

/** `bank_notifications`: every bank notification the service processed, once per bank notification id. */
export const bankNotifications = table('bank_notifications', {
  id: column.text(),
  transferId: column.text(),
  accountNumber: column.text(),
  sessionId: column.nullable(column.text()),
  amount: column.int(),
  currency: column.text(),
  bankOutcome: column.text(),
  result: column.text<NotificationResult>(),
  receivedAt: column.int(),
});

export type BankNotificationRecord = RecordOf<typeof bankNotifications.columns>;

/**
 * Bank notifications, once per id. A second insert of an id already recorded is refused (the primary key),
 * never skipped: a caller that raced another instance to the same notification must see that it lost, and its
 * transaction roll back, not carry on as if its record were the one kept.
 */
export interface BankNotificationRepository {
  insert(record: BankNotificationRecord): Promise<void>;
  /** The result recorded for a notification id already processed. */
  findResult(id: string): Promise<NotificationResult | undefined>;
}

const statements = {
  insert: sql(bankNotifications.insert()),
  find: sql<{ result: NotificationResult }>('SELECT result FROM bank_notifications WHERE id = @id'),
};

/** `BankNotificationRepository` on either store. */
export class SqlBankNotificationRepository implements BankNotificationRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(record: BankNotificationRecord): Promise<void> {
    await this.db.run(statements.insert, record);
  }

  async findResult(id: string): Promise<NotificationResult | undefined> {
    return (await this.db.get(statements.find, { id }))?.result;
  }
}
