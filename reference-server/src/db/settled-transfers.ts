import type { NotificationResult } from './bank-notifications.ts';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** What the service made of a bank transfer: the same results as a notification's. */
export type TransferResult = NotificationResult;

/**
 * `settled_transfers`: every bank transfer the service settled, keyed by the bank's transfer id: the
 * de-duplication that holds when the same transfer comes again under another notification id, or after the
 * closing of its account already settled it.
 */
export const settledTransfers = table('settled_transfers', {
  transferId: column.text(),
  accountNumber: column.text(),
  sessionId: column.nullable(column.text()),
  amount: column.int(),
  currency: column.text(),
  bankOutcome: column.text(),
  result: column.text<TransferResult>(),
  /** Who told the service of it first: a notification, or the bank answering an account closing. */
  source: column.text<'notification' | 'account_close'>(),
  settledAt: column.int(),
});

export type SettledTransferRecord = RecordOf<typeof settledTransfers.columns>;

/**
 * Settled transfers, once per transfer id. A second insert of a transfer id is refused (unique violation), not
 * skipped: `insert` answers nothing, so a skipped row would let the instance that lost the race go on to credit
 * the session a second time; refused, its transaction rolls back with everything it did.
 */
export interface SettledTransferRepository {
  insert(record: SettledTransferRecord): Promise<void>;
  /** The result recorded for a transfer already settled, or undefined. */
  findResult(transferId: string): Promise<TransferResult | undefined>;
  /** The transfer that paid a session (result `credited`): where its refunds go back to. */
  creditedTo(sessionId: string): Promise<string | undefined>;
}

const statements = {
  creditedTo: sql<{ transferId: string }>(
    `SELECT transfer_id AS "transferId" FROM settled_transfers WHERE session_id = @sessionId AND result = 'credited'`,
  ),
  insert: sql(settledTransfers.insert()),
  find: sql<{ result: TransferResult }>(
    'SELECT result FROM settled_transfers WHERE transfer_id = @transferId',
  ),
};

/**
 * `SettledTransferRepository` on either store.
 *
 * @example
 * if ((await transfers.findResult('trf_1')) === undefined) await transfers.insert(record);
 */
export class SqlSettledTransferRepository implements SettledTransferRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(record: SettledTransferRecord): Promise<void> {
    await this.db.run(statements.insert, record);
  }

  async findResult(transferId: string): Promise<TransferResult | undefined> {
    return (await this.db.get(statements.find, { transferId }))?.result;
  }

  async creditedTo(sessionId: string): Promise<string | undefined> {
    return (await this.db.get(statements.creditedTo, { sessionId }))?.transferId;
  }
}
