import type { NotificationResult } from './bank-notifications.ts';
import type { SqliteDatabase } from './database.ts';

/** What the service made of a bank transfer: the same results as a notification's. */
export type TransferResult = NotificationResult;

/** A transfer as the service settled it, once per bank transfer id. */
export interface SettledTransferRecord {
  transferId: string;
  accountNumber: string;
  sessionId: string | null;
  amount: number;
  currency: string;
  bankOutcome: string;
  result: TransferResult;
  /** Who told the service of it first: a notification, or the bank answering an account closing. */
  source: 'notification' | 'account_close';
  settledAt: number;
}

/**
 * Every bank transfer the service settled, keyed by the bank's transfer id: the de-duplication that holds
 * when the same transfer comes again under another notification id, or after the closing of its account
 * already settled it.
 *
 * @example
 * const seen = new SettledTransferRepository(db).findResult('trf_…'); // 'credited' | … | undefined
 */
export class SettledTransferRepository {
  private readonly insertStatement;
  private readonly findStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO settled_transfers
         (transfer_id, account_number, session_id, amount, currency, bank_outcome, result, source, settled_at)
       VALUES (@transferId, @accountNumber, @sessionId, @amount, @currency, @bankOutcome, @result, @source, @settledAt)`,
    );
    this.findStatement = db.prepare<[string], { result: TransferResult }>(
      'SELECT result FROM settled_transfers WHERE transfer_id = ?',
    );
  }

  insert(record: SettledTransferRecord): void {
    this.insertStatement.run(record);
  }

  /** The result recorded for a transfer already settled, or undefined. */
  findResult(transferId: string): TransferResult | undefined {
    return this.findStatement.get(transferId)?.result;
  }
}
