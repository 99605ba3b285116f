import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** `virtual_accounts`: the service's record of each account the bank provisioned for a session. */
export const virtualAccounts = table('virtual_accounts', {
  accountNumber: column.text(),
  sessionId: column.text(),
  bankName: column.text(),
  accountName: column.text(),
  createdAt: column.int(),
  expiresAt: column.int(),
  closedAt: column.nullable(column.int()),
});

export type VirtualAccountRecord = RecordOf<typeof virtualAccounts.columns>;

/** Virtual accounts as the service reads and writes them. */
export interface VirtualAccountRepository {
  insert(account: Omit<VirtualAccountRecord, 'closedAt'>): Promise<void>;
  find(accountNumber: string): Promise<VirtualAccountRecord | undefined>;
  /** Closes an open account; an account already closed keeps its first closing time. */
  close(accountNumber: string, at: number): Promise<void>;
  /**
   * Brings an open account's end forward to `at` (test mode's "expire the account now"); false when it is
   * closed or already ends by then. The sweeper's own code then ends it as at its natural end.
   */
  expireAt(accountNumber: string, at: number): Promise<boolean>;
  /** Open accounts whose countdown has run out, oldest deadline first (ties by creation, then number). */
  overdue(now: number, limit: number): Promise<VirtualAccountRecord[]>;
}

const statements = {
  insert: sql(virtualAccounts.insert()),
  find: sql<VirtualAccountRecord>(
    `SELECT ${virtualAccounts.select()} FROM virtual_accounts WHERE account_number = @accountNumber`,
  ),
  close: sql(
    'UPDATE virtual_accounts SET closed_at = @at WHERE account_number = @accountNumber AND closed_at IS NULL',
  ),
  expireAt: sql(
    `UPDATE virtual_accounts SET expires_at = @at
     WHERE account_number = @accountNumber AND closed_at IS NULL AND expires_at > @at`,
  ),
  overdue: sql<VirtualAccountRecord>(
    `SELECT ${virtualAccounts.select()} FROM virtual_accounts WHERE closed_at IS NULL AND expires_at <= @now
     ORDER BY expires_at, created_at, account_number LIMIT @limit`,
  ),
};

/** `VirtualAccountRepository` on either store. */
export class SqlVirtualAccountRepository implements VirtualAccountRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(account: Omit<VirtualAccountRecord, 'closedAt'>): Promise<void> {
    await this.db.run(statements.insert, { ...account, closedAt: null });
  }

  async find(accountNumber: string): Promise<VirtualAccountRecord | undefined> {
    return this.db.get(statements.find, { accountNumber });
  }

  async close(accountNumber: string, at: number): Promise<void> {
    await this.db.run(statements.close, { accountNumber, at });
  }

  async expireAt(accountNumber: string, at: number): Promise<boolean> {
    return (await this.db.run(statements.expireAt, { accountNumber, at })) === 1;
  }

  async overdue(now: number, limit: number): Promise<VirtualAccountRecord[]> {
    return this.db.all(statements.overdue, { now, limit });
  }
}
