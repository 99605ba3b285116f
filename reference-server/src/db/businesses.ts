import type { SqliteDatabase } from './database.ts';

export interface Business {
  id: string;
  name: string;
  kycApproved: boolean;
  createdAt: number;
}

type BusinessRow = { id: string; name: string; kyc_status: string; created_at: number };

const toBusiness = (row: BusinessRow): Business => ({
  id: row.id,
  name: row.name,
  kycApproved: row.kyc_status === 'approved',
  createdAt: row.created_at,
});

export class BusinessRepository {
  private readonly insertStatement;
  private readonly findStatement;
  private readonly approveStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare<[string, string, string, number]>(
      'INSERT INTO businesses (id, name, kyc_status, created_at) VALUES (?, ?, ?, ?)',
    );
    this.findStatement = db.prepare<[string], BusinessRow>('SELECT * FROM businesses WHERE id = ?');
    this.approveStatement = db.prepare<[string]>(
      "UPDATE businesses SET kyc_status = 'approved' WHERE id = ?",
    );
  }

  insert(business: Business): void {
    this.insertStatement.run(
      business.id,
      business.name,
      business.kycApproved ? 'approved' : 'pending',
      business.createdAt,
    );
  }

  find(id: string): Business | undefined {
    const row = this.findStatement.get(id);
    return row && toBusiness(row);
  }

  /** Returns false when no such business exists. */
  approveKyc(id: string): boolean {
    return this.approveStatement.run(id).changes === 1;
  }
}
