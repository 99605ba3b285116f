import type { SessionRecord } from './sessions.ts';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';
import type { VirtualAccountRecord } from './virtual-accounts.ts';

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
  /**
   * Everything a notification's decision reads, in one statement, where each read would be a round trip inside
   * the payment's transaction (PostgreSQL: `PostgresBankNotificationRepository`, issue 38). Absent on SQLite,
   * where the reads are function calls: `notificationContext` then asks each repository.
   */
  findContext?(about: NotificationAbout): Promise<NotificationContext>;
}

/** The notification whose decision is read: its id, its transfer's, the account it names. */
export interface NotificationAbout {
  id: string;
  transferId: string;
  accountNumber: string;
}

/**
 * What a notification's decision reads: the result recorded for its id (`known`), the one recorded for its
 * transfer by any notification (`settled`), the account it names and the session that account was opened for;
 * each undefined when there is none.
 */
export interface NotificationContext {
  known: NotificationResult | undefined;
  settled: NotificationResult | undefined;
  account: VirtualAccountRecord | undefined;
  session: SessionRecord | undefined;
}

const statements = {
  insert: sql(bankNotifications.insert()),
  find: sql<{ result: NotificationResult }>('SELECT result FROM bank_notifications WHERE id = @id'),
};

/** `BankNotificationRepository` on either store. */
export class SqlBankNotificationRepository implements BankNotificationRepository {
  constructor(protected readonly db: SqlRunner) {}

  async insert(record: BankNotificationRecord): Promise<void> {
    await this.db.run(statements.insert, record);
  }

  async findResult(id: string): Promise<NotificationResult | undefined> {
    return (await this.db.get(statements.find, { id }))?.result;
  }
}
