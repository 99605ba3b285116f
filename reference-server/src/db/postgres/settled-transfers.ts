import type { QueryResult } from 'pg';
import type { Repositories } from '../repositories.ts';
import type { SettledTransferRecord, TransferResult } from '../settled-transfers.ts';
import type { Queryable } from './notification-channel.ts';

/** What the service calls: `Repositories['settledTransfers']` (a class cannot implement an indexed type directly). */
type SettledTransfersContract = Repositories['settledTransfers'];

/**
 * The PostgreSQL twin of `SettledTransferRepository` (`../settled-transfers.ts`): every bank transfer the
 * service settled, once per transfer id. A second insert of a transfer id is refused (unique violation,
 * SQLSTATE 23505) exactly as SQLite refuses it. Not `ON CONFLICT DO NOTHING`: `insert` answers nothing, so a
 * skipped row would let the instance that lost the race go on to credit the session a second time; refused,
 * its transaction rolls back with everything it did.
 *
 * @example
 * const transfers = new PostgresSettledTransferRepository(transactionClient);
 * if ((await transfers.findResult('trf_1')) === undefined) await transfers.insert(record);
 */
export class PostgresSettledTransferRepository implements SettledTransfersContract {
  constructor(private readonly db: Queryable) {}

  async insert(record: SettledTransferRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO settled_transfers
         (transfer_id, account_number, session_id, amount, currency, bank_outcome, result, source, settled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        record.transferId,
        record.accountNumber,
        record.sessionId,
        record.amount,
        record.currency,
        record.bankOutcome,
        record.result,
        record.source,
        record.settledAt,
      ],
    );
  }

  /** The result recorded for a transfer already settled, or undefined. */
  async findResult(transferId: string): Promise<TransferResult | undefined> {
    const result = (await this.db.query('SELECT result FROM settled_transfers WHERE transfer_id = $1', [
      transferId,
    ])) as QueryResult<{ result: TransferResult }>;
    return result.rows[0]?.result;
  }
}
