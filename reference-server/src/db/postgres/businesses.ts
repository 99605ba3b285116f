import type { Business, BusinessRepository } from '../businesses.ts';
import type { Async } from '../repositories.ts';
import { exactInteger } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

type BusinessRow = { id: string; name: string; kyc_status: string; created_at: string };

const toBusiness = (row: BusinessRow): Business => ({
  id: row.id,
  name: row.name,
  kycApproved: row.kyc_status === 'approved',
  createdAt: exactInteger(row.created_at),
});

/**
 * `businesses` on PostgreSQL: the twin of the SQLite `BusinessRepository`, same methods and records.
 *
 * @example
 * const businesses = new PostgresBusinessRepository(pool);
 * await businesses.insert({ id: 'biz_1', name: 'Acme', kycApproved: false, createdAt: Date.now() });
 * await businesses.approveKyc('biz_1'); // true
 */
export class PostgresBusinessRepository implements Async<BusinessRepository> {
  constructor(private readonly db: Queryable) {}

  async insert(business: Business): Promise<void> {
    await this.db.query('INSERT INTO businesses (id, name, kyc_status, created_at) VALUES ($1, $2, $3, $4)', [
      business.id,
      business.name,
      business.kycApproved ? 'approved' : 'pending',
      business.createdAt,
    ]);
  }

  async find(id: string): Promise<Business | undefined> {
    const { rows } = await runQuery<BusinessRow>(this.db, 'SELECT * FROM businesses WHERE id = $1', [id]);
    return rows[0] && toBusiness(rows[0]);
  }

  /** Returns false when no such business exists (approving an approved business again is true, as in SQLite). */
  async approveKyc(id: string): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.db,
      "UPDATE businesses SET kyc_status = 'approved' WHERE id = $1",
      [id],
    );
    return rowCount === 1;
  }
}
