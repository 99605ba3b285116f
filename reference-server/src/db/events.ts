import type { Environment } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/**
 * `events`: every status transition of a session, recorded in the same transaction as the transition. `seq` is
 * handed out at insert (not at commit, on PostgreSQL), so it orders one session's events (a session's
 * transitions are serialised on its row), never events across sessions.
 */
export const events = table('events', {
  seq: column.serial(),
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  sessionId: column.text(),
  /** `session.<status>`: the webhook types and the internal ones (`session.awaiting_payment`, `session.pending`). */
  type: column.text(),
  reason: column.nullable(column.text()),
  /** JSON of the session after the transition, as the merchant API shows it (kept as the exact text). */
  payload: column.text(),
  /** For `session.credit_unapplied`: the credit (JSON), sent beside the session in the webhook. */
  credit: column.nullable(column.text()),
  /** For `refund.succeeded` and `refund.failed`: the refund (JSON), sent beside the session in the webhook. */
  refund: column.nullable(column.text()),
  createdAt: column.int(),
});

export type EventRecord = RecordOf<typeof events.columns>;

/** A new event: `credit` and `refund` may be left out (none). */
export type NewEvent = Omit<EventRecord, 'seq' | 'credit' | 'refund'> & {
  credit?: string | null;
  refund?: string | null;
};

/** Session events as the service reads and writes them. */
export interface EventRepository {
  /** Inserts the event and answers it with its `seq`. */
  insert(event: NewEvent): Promise<EventRecord>;
  find(id: string): Promise<EventRecord | undefined>;
  /** A session's transitions after `seq`, oldest first: what a reconnecting stream missed. */
  forSessionAfter(sessionId: string, seq: number): Promise<EventRecord[]>;
  lastForSession(sessionId: string): Promise<EventRecord | undefined>;
  /** One business and environment's events, newest first, of one type if given, older than `beforeSeq`. */
  list(query: EventListQuery): Promise<EventRecord[]>;
}

export interface EventListQuery {
  businessId: string;
  environment: Environment;
  type?: string | undefined;
  beforeSeq?: number | undefined;
  limit: number;
}

const statements = {
  insert: sql<{ seq: number }>(events.insert('RETURNING seq')),
  find: sql<EventRecord>(`SELECT ${events.select()} FROM events WHERE id = @id`),
  after: sql<EventRecord>(
    `SELECT ${events.select()} FROM events WHERE session_id = @sessionId AND seq > @seq ORDER BY seq`,
  ),
  last: sql<EventRecord>(
    `SELECT ${events.select()} FROM events WHERE session_id = @sessionId ORDER BY seq DESC LIMIT 1`,
  ),
  list: sql<EventRecord>(
    `SELECT ${events.select()} FROM events
     WHERE business_id = @businessId AND environment = @environment
       AND (CAST(@type AS text) IS NULL OR type = @type) AND seq < @beforeSeq
     ORDER BY seq DESC LIMIT @limit`,
  ),
};

/**
 * `EventRepository` on either store.
 *
 * @example
 * const { seq } = await new SqlEventRepository(tx).insert({ id, businessId, environment, sessionId,
 *   type: 'session.successful', reason: null, payload, createdAt: now });
 */
export class SqlEventRepository implements EventRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(event: NewEvent): Promise<EventRecord> {
    const record = { credit: null, refund: null, ...event };
    const inserted = await this.db.get(statements.insert, record);
    if (!inserted) throw new Error('INSERT … RETURNING returned no row');
    return { ...record, seq: inserted.seq };
  }

  async find(id: string): Promise<EventRecord | undefined> {
    return this.db.get(statements.find, { id });
  }

  async forSessionAfter(sessionId: string, seq: number): Promise<EventRecord[]> {
    return this.db.all(statements.after, { sessionId, seq });
  }

  async lastForSession(sessionId: string): Promise<EventRecord | undefined> {
    return this.db.get(statements.last, { sessionId });
  }

  async list(query: EventListQuery): Promise<EventRecord[]> {
    return this.db.all(statements.list, {
      businessId: query.businessId,
      environment: query.environment,
      type: query.type ?? null,
      beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
    });
  }
}
