import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** `webhook_attempts`: every attempt of a delivery. */
export const webhookAttempts = table('webhook_attempts', {
  id: column.serial(),
  deliveryId: column.text(),
  attemptedAt: column.int(),
  statusCode: column.nullable(column.int()),
  latencyMs: column.int(),
  error: column.nullable(column.text()),
  /** At most 1 KB of the receiver's answer. */
  responseExcerpt: column.nullable(column.text()),
});

export interface WebhookAttemptRecord {
  deliveryId: string;
  attemptedAt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /**
   * Why `responseExcerpt` is null although the receiver answered, else null: `receiver_not_public` (the worker
   * withheld it), or `receiver_not_checked` (stored before answers were withheld, cleared by migration 011).
   */
  responseExcerptWithheld: string | null;
}

/**
 * How a withheld answer is recorded until `webhook_attempts` has a column of its own for it: in `error`, which
 * is always NULL when the receiver answered (an attempt has an error or an answer, never both), behind a prefix
 * no error text starts with. Only this repository reads or writes it, and migration 011, which marks the
 * excerpts it cleared (`withheld:receiver_not_checked`).
 */
const WITHHELD_PREFIX = 'withheld:';

const statements = {
  forDeliveries: sql<RecordOf<typeof webhookAttempts.columns>>({
    sqlite: `SELECT ${webhookAttempts.select()} FROM webhook_attempts
      WHERE delivery_id IN (SELECT value FROM json_each(@deliveryIds)) ORDER BY id`,
    postgres: `SELECT ${webhookAttempts.select()} FROM webhook_attempts
      WHERE delivery_id = ANY(CAST(@deliveryIds AS text[])) ORDER BY id`,
  }),
  insert: sql(webhookAttempts.insert()),
};

/**
 * The attempts of webhook deliveries, on either store: written one per attempt in the worker's outcome write,
 * read for the deliveries API and the portal. Reached through `WebhookDeliveryRepository` (`recordAttempt`,
 * `attemptsOf`), whose write jobs they belong to.
 *
 * @example
 * const attempts = new SqlWebhookAttempts(db);
 * const byDelivery = await attempts.of(['whd_…']);
 */
export class SqlWebhookAttempts {
  constructor(private readonly db: SqlRunner) {}

  /** The attempts of these deliveries, oldest first, by delivery. */
  async of(deliveryIds: readonly string[]): Promise<Map<string, WebhookAttemptRecord[]>> {
    const grouped = new Map<string, WebhookAttemptRecord[]>();
    if (deliveryIds.length === 0) return grouped;
    for (const row of await this.db.all(statements.forDeliveries, { deliveryIds: [...deliveryIds] })) {
      const { id: _id, ...stored } = row;
      const attempt: WebhookAttemptRecord = { ...stored, ...readError(row.error) };
      const list = grouped.get(row.deliveryId);
      if (list) list.push(attempt);
      else grouped.set(row.deliveryId, [attempt]);
    }
    return grouped;
  }

  /** One attempt; a withheld answer keeps no excerpt, only the reason (see `WITHHELD_PREFIX`). */
  async record(attempt: WebhookAttemptRecord): Promise<void> {
    const { responseExcerptWithheld, ...row } = attempt;
    await this.db.run(statements.insert, {
      ...row,
      error:
        row.error ??
        (responseExcerptWithheld === null ? null : `${WITHHELD_PREFIX}${responseExcerptWithheld}`),
      responseExcerpt: responseExcerptWithheld === null ? row.responseExcerpt : null,
    });
  }
}

/** The stored `error` column as the attempt's `error` and `responseExcerptWithheld`. */
function readError(stored: string | null): { error: string | null; responseExcerptWithheld: string | null } {
  if (stored?.startsWith(WITHHELD_PREFIX)) {
    return { error: null, responseExcerptWithheld: stored.slice(WITHHELD_PREFIX.length) };
  }
  return { error: stored, responseExcerptWithheld: null };
}
