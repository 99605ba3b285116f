import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** `businesses`: a merchant. KYC is stored as `kyc_status` ('pending' | 'approved'). */
export const businesses = table('businesses', {
  id: column.text(),
  name: column.text(),
  kycApproved: column.named('kyc_status', {
    generated: false,
    encode: (approved: boolean) => (approved ? 'approved' : 'pending'),
    decode: (stored: unknown) => stored === 'approved',
  }),
  createdAt: column.int(),
});

export type Business = RecordOf<typeof businesses.columns>;

/** Businesses as the service reads and writes them. */
export interface BusinessRepository {
  insert(business: Business): Promise<void>;
  find(id: string): Promise<Business | undefined>;
  /** Returns false when no such business exists (approving an approved business again is true). */
  approveKyc(id: string): Promise<boolean>;
}

const statements = {
  insert: sql(businesses.insert()),
  find: sql<Business>(`SELECT ${businesses.select()} FROM businesses WHERE id = @id`),
  approve: sql("UPDATE businesses SET kyc_status = 'approved' WHERE id = @id"),
};

/**
 * `BusinessRepository` on either store.
 *
 * @example
 * const businesses = new SqlBusinessRepository(runner);
 * await businesses.insert({ id: 'biz_1', name: 'Acme', kycApproved: false, createdAt: Date.now() });
 */
export class SqlBusinessRepository implements BusinessRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(business: Business): Promise<void> {
    await this.db.run(statements.insert, businesses.encode(business));
  }

  async find(id: string): Promise<Business | undefined> {
    return businesses.decode(await this.db.get(statements.find, { id }));
  }

  async approveKyc(id: string): Promise<boolean> {
    return (await this.db.run(statements.approve, { id })) === 1;
  }
}
