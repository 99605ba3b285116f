import type { Environment } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/**
 * `payment_links`: a page payers open to pay a fixed amount to a business (issue 36). `active` is false once
 * the merchant turned it off or, for a link that is not `reusable`, once its first session was paid
 * (`completedAt`, written in that payment's own transaction).
 */
export const paymentLinks = table('payment_links', {
  seq: column.serial(),
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  name: column.text(),
  amount: column.int(),
  currency: column.text(),
  reusable: column.flag(),
  active: column.flag(),
  successUrl: column.nullable(column.text()),
  metadata: column.json<Record<string, string>>(),
  completedAt: column.nullable(column.int()),
  createdAt: column.int(),
  updatedAt: column.int(),
});

export type PaymentLinkRecord = RecordOf<typeof paymentLinks.columns>;

/** One page of an owner's links, newest first. */
export interface PaymentLinkListQuery {
  businessId: string;
  environment: Environment;
  active?: boolean | undefined;
  beforeSeq?: number | undefined;
  limit: number;
}

/** Payment links as the service reads and writes them. */
export interface PaymentLinkRepository {
  insert(link: Omit<PaymentLinkRecord, 'seq' | 'completedAt'>): Promise<PaymentLinkRecord>;
  find(id: string): Promise<PaymentLinkRecord | undefined>;
  list(query: PaymentLinkListQuery): Promise<PaymentLinkRecord[]>;
  /**
   * Renames and/or turns a link on or off. Turning on a link that was completed changes nothing (false): a
   * one-time link that was paid stays closed.
   */
  update(id: string, change: { name?: string; active?: boolean }, now: number): Promise<boolean>;
  /**
   * Closes a link that is not reusable after its first successful payment, in that payment's transaction;
   * a reusable link is left as it is. True when this call closed it.
   */
  completeIfSingleUse(id: string, now: number): Promise<boolean>;
}

const SELECT = `SELECT ${paymentLinks.select()} FROM payment_links`;

const statements = {
  insert: sql<{ seq: number }>(paymentLinks.insert('RETURNING seq')),
  find: sql<PaymentLinkRecord>(`${SELECT} WHERE id = @id`),
  list: sql<PaymentLinkRecord>(
    `${SELECT} WHERE business_id = @businessId AND environment = @environment
       AND (CAST(@active AS integer) IS NULL OR active = @active)
       AND seq < @beforeSeq ORDER BY seq DESC LIMIT @limit`,
  ),
  update: sql(
    `UPDATE payment_links SET name = COALESCE(CAST(@name AS text), name),
       active = COALESCE(CAST(@active AS integer), active), updated_at = @now
     WHERE id = @id AND (CAST(@active AS integer) IS NULL OR @active = 0 OR completed_at IS NULL)`,
  ),
  complete: sql(
    `UPDATE payment_links SET active = 0, completed_at = @now, updated_at = @now
     WHERE id = @id AND reusable = 0 AND completed_at IS NULL`,
  ),
};

/**
 * `PaymentLinkRepository` on either store.
 *
 * @example
 * const link = await new SqlPaymentLinkRepository(runner).find('pl_…');
 */
export class SqlPaymentLinkRepository implements PaymentLinkRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(link: Omit<PaymentLinkRecord, 'seq' | 'completedAt'>): Promise<PaymentLinkRecord> {
    const record = { ...link, completedAt: null };
    const inserted = await this.db.get(statements.insert, paymentLinks.encode(record));
    if (!inserted) throw new Error('the payment link insert returned no seq');
    return { ...record, seq: inserted.seq };
  }

  async find(id: string): Promise<PaymentLinkRecord | undefined> {
    return paymentLinks.decode(await this.db.get(statements.find, { id }));
  }

  async list(query: PaymentLinkListQuery): Promise<PaymentLinkRecord[]> {
    const rows = await this.db.all(statements.list, {
      businessId: query.businessId,
      environment: query.environment,
      active: query.active === undefined ? null : query.active ? 1 : 0,
      beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
    });
    return rows.map((row) => paymentLinks.decode(row));
  }

  async update(id: string, change: { name?: string; active?: boolean }, now: number): Promise<boolean> {
    const active = change.active === undefined ? null : change.active ? 1 : 0;
    return (await this.db.run(statements.update, { id, name: change.name ?? null, active, now })) === 1;
  }

  async completeIfSingleUse(id: string, now: number): Promise<boolean> {
    return (await this.db.run(statements.complete, { id, now })) === 1;
  }
}
