import type { SqliteDatabase } from './database.ts';

/** What the service made of a bank notification. */
export type NotificationResult = 'credited' | 'mismatch' | 'not_credited' | 'unapplied' | 'unknown_account';

export interface BankNotificationRecord {
  id: string;
  transferId: string;
  accountNumber: string;
  sessionId: string | null;
  amount: number;
  currency: string;
  bankOutcome: string;
  result: NotificationResult;
  receivedAt: number;
}

/** Every bank notification the service processed, once per bank notification id. */
export class BankNotificationRepository {
  private readonly insertStatement;
  private readonly findStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO bank_notifications
         (id, transfer_id, account_number, session_id, amount, currency, bank_outcome, result, received_at)
       VALUES (@id, @transferId, @accountNumber, @sessionId, @amount, @currency, @bankOutcome, @result, @receivedAt)`,
    );
    this.findStatement = db.prepare<[string], { result: NotificationResult }>(
      'SELECT result FROM bank_notifications WHERE id = ?',
    );
  }

  insert(record: BankNotificationRecord): void {
    this.insertStatement.run(record);
  }

  /** The result recorded for a notification id already processed. */
  findResult(id: string): NotificationResult | undefined {
    return this.findStatement.get(id)?.result;
  }
}
