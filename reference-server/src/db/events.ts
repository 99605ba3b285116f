import type { Environment } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

/** One status transition of a session, as recorded in the same transaction as the transition. */
export interface EventRecord {
  seq: number;
  id: string;
  businessId: string;
  environment: Environment;
  sessionId: string;
  /** `session.<status>`: the four webhook types and the internal ones (`session.awaiting_payment`, `session.pending`). */
  type: string;
  reason: string | null;
  /** JSON of the session after the transition, as the merchant API shows it. */
  payload: string;
  /** For `session.credit_unapplied`: the credit (JSON), sent beside the session in the webhook. */
  credit?: string | null;
  createdAt: number;
}

type EventRow = {
  seq: number;
  id: string;
  business_id: string;
  environment: Environment;
  session_id: string;
  type: string;
  reason: string | null;
  payload: string;
  credit: string | null;
  created_at: number;
};

const toEvent = (row: EventRow): EventRecord => ({
  seq: row.seq,
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  sessionId: row.session_id,
  type: row.type,
  reason: row.reason,
  payload: row.payload,
  credit: row.credit,
  createdAt: row.created_at,
});

export class EventRepository {
  private readonly insertStatement;
  private readonly findStatement;
  private readonly afterStatement;
  private readonly lastStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO events (id, business_id, environment, session_id, type, reason, payload, credit, created_at)
       VALUES (@id, @businessId, @environment, @sessionId, @type, @reason, @payload, @credit, @createdAt)`,
    );
    this.findStatement = db.prepare<[string], EventRow>('SELECT * FROM events WHERE id = ?');
    this.afterStatement = db.prepare<[string, number], EventRow>(
      'SELECT * FROM events WHERE session_id = ? AND seq > ? ORDER BY seq',
    );
    this.lastStatement = db.prepare<[string], EventRow>(
      'SELECT * FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1',
    );
  }

  insert(event: Omit<EventRecord, 'seq'>): EventRecord {
    const { lastInsertRowid } = this.insertStatement.run({ credit: null, ...event });
    return { ...event, seq: Number(lastInsertRowid) };
  }

  find(id: string): EventRecord | undefined {
    const row = this.findStatement.get(id);
    return row && toEvent(row);
  }

  /** A session's transitions after `seq`, oldest first: what a reconnecting stream missed. */
  forSessionAfter(sessionId: string, seq: number): EventRecord[] {
    return this.afterStatement.all(sessionId, seq).map(toEvent);
  }

  lastForSession(sessionId: string): EventRecord | undefined {
    const row = this.lastStatement.get(sessionId);
    return row && toEvent(row);
  }
}
