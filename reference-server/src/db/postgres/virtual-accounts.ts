import type { QueryResult } from 'pg';
import type { Repositories } from '../repositories.ts';
import type { VirtualAccountRecord } from '../virtual-accounts.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';

type VirtualAccountRow = {
  account_number: string;
  session_id: string;
  bank_name: string;
  account_name: string;
  created_at: string;
  expires_at: string;
  closed_at: string | null;
};

const toVirtualAccount = (row: VirtualAccountRow): VirtualAccountRecord => ({
  accountNumber: row.account_number,
  sessionId: row.session_id,
  bankName: row.bank_name,
  accountName: row.account_name,
  createdAt: exactInteger(row.created_at),
  expiresAt: exactInteger(row.expires_at),
  closedAt: exactIntegerOrNull(row.closed_at),
});

/** What the service calls: `Repositories['virtualAccounts']` (a class cannot implement an indexed type directly). */
type VirtualAccountsContract = Repositories['virtualAccounts'];

/**
 * The PostgreSQL twin of `VirtualAccountRepository` (`../virtual-accounts.ts`): the service's record of each
 * account the bank provisioned for a session. `db` is the pool for a read, or the client of a write transaction.
 *
 * @example
 * const accounts = new PostgresVirtualAccountRepository(pool);
 * await accounts.close('0123456789', clock.now()); // a second close keeps the first time
 */
export class PostgresVirtualAccountRepository implements VirtualAccountsContract {
  constructor(private readonly db: Queryable) {}

  async insert(account: Omit<VirtualAccountRecord, 'closedAt'>): Promise<void> {
    await this.db.query(
      `INSERT INTO virtual_accounts (account_number, session_id, bank_name, account_name, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        account.accountNumber,
        account.sessionId,
        account.bankName,
        account.accountName,
        account.createdAt,
        account.expiresAt,
      ],
    );
  }

  async find(accountNumber: string): Promise<VirtualAccountRecord | undefined> {
    const result = (await this.db.query('SELECT * FROM virtual_accounts WHERE account_number = $1', [
      accountNumber,
    ])) as QueryResult<VirtualAccountRow>;
    const row = result.rows[0];
    return row && toVirtualAccount(row);
  }

  /** Closes an open account; an account already closed keeps its first closing time. */
  async close(accountNumber: string, at: number): Promise<void> {
    await this.db.query(
      'UPDATE virtual_accounts SET closed_at = $1 WHERE account_number = $2 AND closed_at IS NULL',
      [at, accountNumber],
    );
  }

  /** Brings an open account's end forward to `at`; false when it is closed or already ends by then. */
  async expireAt(accountNumber: string, at: number): Promise<boolean> {
    const result = (await this.db.query(
      'UPDATE virtual_accounts SET expires_at = $1 WHERE account_number = $2 AND closed_at IS NULL AND expires_at > $1',
      [at, accountNumber],
    )) as QueryResult;
    return result.rowCount === 1;
  }

  /**
   * Open accounts whose countdown has run out, oldest deadline first. SQLite breaks ties by rowid (insertion
   * order); a PostgreSQL table has no insertion order, so ties go by creation time, then account number.
   */
  async overdue(now: number, limit: number): Promise<VirtualAccountRecord[]> {
    const result = (await this.db.query(
      `SELECT * FROM virtual_accounts WHERE closed_at IS NULL AND expires_at <= $1
       ORDER BY expires_at, created_at, account_number LIMIT $2`,
      [now, limit],
    )) as QueryResult<VirtualAccountRow>;
    return result.rows.map(toVirtualAccount);
  }
}
