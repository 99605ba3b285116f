import { type SessionRecord, sessions } from './sessions.ts';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';
import { type VirtualAccountRecord, virtualAccounts } from './virtual-accounts.ts';

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
   * Everything a notification's decision reads, in one statement: the result already recorded for its id
   * (`known`), the one recorded for its transfer by any notification (`settled`), the account it names, and the
   * session that account was opened for. *Why one:* on PostgreSQL each read is a round trip inside the payment's
   * transaction, on the way to the payer's push (issue 38).
   */
  findContext(about: { id: string; transferId: string; accountNumber: string }): Promise<NotificationContext>;
}

/** What `findContext` found; each part undefined when there is none. */
export interface NotificationContext {
  known: NotificationResult | undefined;
  settled: NotificationResult | undefined;
  account: VirtualAccountRecord | undefined;
  session: SessionRecord | undefined;
}

const statements = {
  insert: sql(bankNotifications.insert()),
  find: sql<{ result: NotificationResult }>('SELECT result FROM bank_notifications WHERE id = @id'),
  settled: sql<{ result: NotificationResult }>(
    'SELECT result FROM settled_transfers WHERE transfer_id = @transferId',
  ),
  account: sql<VirtualAccountRecord>(
    `SELECT ${virtualAccounts.select()} FROM virtual_accounts WHERE account_number = @accountNumber`,
  ),
  session: sql<SessionRecord>(`SELECT ${sessions.select()} FROM sessions WHERE id = @id`),
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

  /**
   * Four statements here: on SQLite each is a function call, not a round trip, and one joined statement measured
   * slower than the four (45 against 10 µs). PostgreSQL's repository sends one
   * (`PostgresBankNotificationRepository`).
   */
  async findContext(about: {
    id: string;
    transferId: string;
    accountNumber: string;
  }): Promise<NotificationContext> {
    const account = await this.db.get(statements.account, { accountNumber: about.accountNumber });
    return {
      known: (await this.db.get(statements.find, { id: about.id }))?.result,
      settled: (await this.db.get(statements.settled, { transferId: about.transferId }))?.result,
      account,
      session: account && sessions.decode(await this.db.get(statements.session, { id: account.sessionId })),
    };
  }
}
