import type { SqliteDatabase } from './database.ts';

/** The service's record of an account the bank provisioned for a session. */
export interface VirtualAccountRecord {
  accountNumber: string;
  sessionId: string;
  bankName: string;
  accountName: string;
  createdAt: number;
  expiresAt: number;
  closedAt: number | null;
}

type VirtualAccountRow = {
  account_number: string;
  session_id: string;
  bank_name: string;
  account_name: string;
  created_at: number;
  expires_at: number;
  closed_at: number | null;
};

const toVirtualAccount = (row: VirtualAccountRow): VirtualAccountRecord => ({
  accountNumber: row.account_number,
  sessionId: row.session_id,
  bankName: row.bank_name,
  accountName: row.account_name,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  closedAt: row.closed_at,
});

export class VirtualAccountRepository {
  private readonly insertStatement;
  private readonly findStatement;
  private readonly closeStatement;
  private readonly expireAtStatement;
  private readonly overdueStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO virtual_accounts (account_number, session_id, bank_name, account_name, created_at, expires_at)
       VALUES (@accountNumber, @sessionId, @bankName, @accountName, @createdAt, @expiresAt)`,
    );
    this.findStatement = db.prepare<[string], VirtualAccountRow>(
      'SELECT * FROM virtual_accounts WHERE account_number = ?',
    );
    this.closeStatement = db.prepare<[number, string]>(
      'UPDATE virtual_accounts SET closed_at = ? WHERE account_number = ? AND closed_at IS NULL',
    );
    this.expireAtStatement = db.prepare<[number, string, number]>(
      'UPDATE virtual_accounts SET expires_at = ? WHERE account_number = ? AND closed_at IS NULL AND expires_at > ?',
    );
    this.overdueStatement = db.prepare<[number, number], VirtualAccountRow>(
      'SELECT * FROM virtual_accounts WHERE closed_at IS NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?',
    );
  }

  insert(account: Omit<VirtualAccountRecord, 'closedAt'>): void {
    this.insertStatement.run(account);
  }

  find(accountNumber: string): VirtualAccountRecord | undefined {
    const row = this.findStatement.get(accountNumber);
    return row && toVirtualAccount(row);
  }

  close(accountNumber: string, at: number): void {
    this.closeStatement.run(at, accountNumber);
  }

  /**
   * Brings an open account's end forward to `at` (test mode's "expire the account now"); false when it is
   * closed or already ends by then. The sweeper's own code then ends it as at its natural end.
   */
  expireAt(accountNumber: string, at: number): boolean {
    return this.expireAtStatement.run(at, accountNumber, at).changes === 1;
  }

  /** Open accounts whose countdown has run out. */
  overdue(now: number, limit: number): VirtualAccountRecord[] {
    return this.overdueStatement.all(now, limit).map(toVirtualAccount);
  }
}
