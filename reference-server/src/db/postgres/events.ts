import type { Environment } from '@servicepay/node/protocol';
import type { QueryResult } from 'pg';
import type { EventRecord } from '../events.ts';
import type { Repositories } from '../repositories.ts';
import { exactInteger } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';

type EventRow = {
  seq: string;
  id: string;
  business_id: string;
  environment: Environment;
  session_id: string;
  type: string;
  reason: string | null;
  payload: string;
  credit: string | null;
  created_at: string;
};

const toEvent = (row: EventRow): EventRecord => ({
  seq: exactInteger(row.seq),
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  sessionId: row.session_id,
  type: row.type,
  reason: row.reason,
  payload: row.payload,
  credit: row.credit,
  createdAt: exactInteger(row.created_at),
});

/** What the service calls: `Repositories['events']` (a class cannot implement an indexed type directly). */
type EventsContract = Repositories['events'];

/**
 * The PostgreSQL twin of `EventRepository` (`../events.ts`): every status transition of a session. `seq` is
 * the identity PostgreSQL hands out at insert (`RETURNING seq`), where SQLite answers `lastInsertRowid`. It
 * is handed out at insert, not at commit, so it orders one session's events (a session's transitions are
 * serialised on its row), never events across sessions.
 *
 * @example
 * const events = new PostgresEventRepository(transactionClient);
 * const { seq } = await events.insert({ id, businessId, environment, sessionId, type: 'session.successful',
 *   reason: null, payload, createdAt: now });
 */
export class PostgresEventRepository implements EventsContract {
  constructor(private readonly db: Queryable) {}

  /** Inserts the event and returns it as given, with its `seq` (as SQLite's: no `credit` added when absent). */
  async insert(event: Omit<EventRecord, 'seq'>): Promise<EventRecord> {
    const result = (await this.db.query(
      `INSERT INTO events (id, business_id, environment, session_id, type, reason, payload, credit, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING seq`,
      [
        event.id,
        event.businessId,
        event.environment,
        event.sessionId,
        event.type,
        event.reason,
        event.payload,
        event.credit ?? null,
        event.createdAt,
      ],
    )) as QueryResult<{ seq: string }>;
    const row = result.rows[0];
    if (!row) throw new Error('INSERT … RETURNING returned no row');
    return { ...event, seq: exactInteger(row.seq) };
  }

  async find(id: string): Promise<EventRecord | undefined> {
    const row = ((await this.db.query('SELECT * FROM events WHERE id = $1', [id])) as QueryResult<EventRow>)
      .rows[0];
    return row && toEvent(row);
  }

  /** A session's transitions after `seq`, oldest first: what a reconnecting stream missed. */
  async forSessionAfter(sessionId: string, seq: number): Promise<EventRecord[]> {
    const result = (await this.db.query(
      'SELECT * FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq',
      [sessionId, seq],
    )) as QueryResult<EventRow>;
    return result.rows.map(toEvent);
  }

  async lastForSession(sessionId: string): Promise<EventRecord | undefined> {
    const row = (
      (await this.db.query('SELECT * FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1', [
        sessionId,
      ])) as QueryResult<EventRow>
    ).rows[0];
    return row && toEvent(row);
  }
}
