import type { Environment, WebhookDeliveryStatus } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

/** One event on its way to one endpoint. */
export interface WebhookDeliveryRecord {
  seq: number;
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookAttemptRecord {
  deliveryId: string;
  attemptedAt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /**
   * Why `responseExcerpt` is null although the receiver answered, else null: `receiver_not_public` (the worker
   * withheld it), or `receiver_not_checked` (stored before answers were withheld, cleared by migration 008).
   */
  responseExcerptWithheld: string | null;
}

/**
 * How a withheld answer is recorded until `webhook_attempts` has a column of its own for it: in `error`, which
 * is always NULL when the receiver answered (an attempt has an error or an answer, never both), behind a
 * prefix no error text starts with. Only this repository reads or writes it, and migration 008, which marks the
 * excerpts it cleared (`withheld:receiver_not_checked`).
 */
const WITHHELD_PREFIX = 'withheld:';

/**
 * The condition under which a failed attempt's outcome applies (parameters: the claim's attempt count, then
 * its `claimedUntil`): the delivery is still held by the claim the attempt was made under, or it was parked
 * meanwhile (its endpoint disabled: a park takes no claim, and the attempt still counts, the delivery staying
 * parked). Kept the same in the PostgreSQL repository.
 */
const UNDER_CLAIM = '(attempt_count = ? AND (next_attempt_at = ? OR next_attempt_at IS NULL))';

/** What the worker needs to make one attempt, read in one query. */
export interface DueDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  attemptCount: number;
  url: string;
  environment: Environment;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: number | null;
  eventType: string;
  eventCreatedAt: number;
  /** The session view JSON of the event. */
  payload: string;
  /** The unapplied credit JSON of a `session.credit_unapplied` event; null otherwise. */
  credit: string | null;
  /**
   * The delivery's `next_attempt_at` as this pick left it: the claim's token, which a failed attempt's outcome
   * must find unchanged to apply (`retryAt`, `markFailed`). On PostgreSQL it is the end of the lease `due`
   * took; on SQLite (one process, no lease: the worker's attempts in flight are excluded from `due`) the due
   * time the row had and keeps.
   */
  claimedUntil: number;
}

/**
 * Which claim an attempt's outcome is recorded under: the delivery's `next_attempt_at` and attempt count as
 * `due` handed it out (a `DueDelivery` is one). Once another claim took the delivery, or another outcome was
 * recorded, neither matches any more.
 */
export type DeliveryClaim = Pick<DueDelivery, 'claimedUntil' | 'attemptCount'>;

type DeliveryRow = {
  seq: number;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempt_count: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
};

type AttemptRow = {
  delivery_id: string;
  attempted_at: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
};

const toDelivery = (row: DeliveryRow): WebhookDeliveryRecord => ({
  seq: row.seq,
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  attemptCount: row.attempt_count,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** What `enqueueForEvent` needs of an event. */
export interface EventEnqueue {
  eventId: string;
  businessId: string;
  environment: string;
  type: string;
  now: number;
}

export interface DeliveryListQuery {
  endpointId: string;
  eventId?: string | undefined;
  status?: WebhookDeliveryStatus | undefined;
  beforeSeq?: number | undefined;
  limit: number;
}

/**
 * `webhook_deliveries` and `webhook_attempts`. A pending row is the queue: the worker keeps no other state
 * that a restart could lose.
 */
export class WebhookDeliveryRepository {
  private readonly statements;

  constructor(db: SqliteDatabase) {
    this.statements = {
      enqueueForEvent: db.prepare<EventEnqueue & { idPrefix: string }>(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         SELECT @idPrefix || substr(e.id, 4), e.id, @eventId, 'pending', 0, @now, @now, @now
         FROM webhook_endpoints e
         WHERE e.business_id = @businessId AND e.environment = @environment AND e.enabled = 1
           AND e.deleted_at IS NULL AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = @type)`,
      ),
      insert: db.prepare<[string, string, string, number, number, number]>(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`,
      ),
      due: db.prepare<[number, string, number], DueDelivery>(
        `SELECT d.id, d.endpoint_id AS endpointId, d.event_id AS eventId, d.attempt_count AS attemptCount,
           e.url, e.environment, e.secret_ciphertext AS secretCiphertext,
           e.previous_secret_ciphertext AS previousSecretCiphertext,
           e.previous_secret_expires_at AS previousSecretExpiresAt,
           ev.type AS eventType, ev.created_at AS eventCreatedAt, ev.payload, ev.credit,
           d.next_attempt_at AS claimedUntil
         FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id
         JOIN events ev ON ev.id = d.event_id
         WHERE d.status = 'pending' AND d.next_attempt_at <= ?
           AND d.id NOT IN (SELECT value FROM json_each(?))
         ORDER BY d.next_attempt_at LIMIT ?`,
      ),
      nextDueAt: db.prepare<[], { at: number | null }>(
        `SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`,
      ),
      find: db.prepare<[string], DeliveryRow>(
        `SELECT d.*, ev.type AS event_type FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
         WHERE d.id = ?`,
      ),
      list: db.prepare<
        {
          endpointId: string;
          eventId: string | null;
          status: string | null;
          beforeSeq: number;
          limit: number;
        },
        DeliveryRow
      >(
        `SELECT d.*, ev.type AS event_type FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
         WHERE d.endpoint_id = @endpointId AND d.seq < @beforeSeq
           AND (@eventId IS NULL OR d.event_id = @eventId) AND (@status IS NULL OR d.status = @status)
         ORDER BY d.seq DESC LIMIT @limit`,
      ),
      attempts: db.prepare<[string], AttemptRow>(
        `SELECT delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt FROM webhook_attempts
         WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
      ),
      insertAttempt: db.prepare<{
        deliveryId: string;
        attemptedAt: number;
        statusCode: number | null;
        latencyMs: number;
        error: string | null;
        responseExcerpt: string | null;
      }>(
        `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
         VALUES (@deliveryId, @attemptedAt, @statusCode, @latencyMs, @error, @responseExcerpt)`,
      ),
      succeeded: db.prepare<[number, string]>(
        `UPDATE webhook_deliveries SET status = 'succeeded', attempt_count = attempt_count + 1,
           next_attempt_at = NULL, updated_at = ?
         WHERE id = ? AND status = 'pending'`,
      ),
      retryAt: db.prepare<[number, number, string, number, number]>(
        // An endpoint disabled while this attempt was in flight keeps the delivery parked (NULL).
        `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1,
           next_attempt_at = CASE WHEN (SELECT enabled FROM webhook_endpoints WHERE id = endpoint_id) = 1
             THEN ? ELSE NULL END,
           updated_at = ?
         WHERE id = ? AND status = 'pending' AND ${UNDER_CLAIM}`,
      ),
      failed: db.prepare<[number, string, number, number]>(
        `UPDATE webhook_deliveries SET status = 'failed', attempt_count = attempt_count + 1,
           next_attempt_at = NULL, updated_at = ?
         WHERE id = ? AND status = 'pending' AND ${UNDER_CLAIM}`,
      ),
      park: db.prepare<[number, string]>(
        `UPDATE webhook_deliveries SET next_attempt_at = NULL, updated_at = ?
         WHERE endpoint_id = ? AND status = 'pending'`,
      ),
      unpark: db.prepare<[number, number, string]>(
        `UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ?
         WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at IS NULL`,
      ),
      failAll: db.prepare<[number, string]>(
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = ?
         WHERE endpoint_id = ? AND status = 'pending'`,
      ),
    };
  }

  /**
   * One pending delivery, due at `now`, per enabled endpoint of the event's business and environment that
   * subscribes to its type; returns how many. A delivery's id is `idPrefix` (a fresh `wd_…` id, one per
   * event) followed by the endpoint's id without its `we_`, so it is unique per (event, endpoint).
   */
  enqueueForEvent(idPrefix: string, event: EventEnqueue): number {
    return this.statements.enqueueForEvent.run({ idPrefix, ...event }).changes;
  }

  /** A new pending delivery, due at `now` (resend). */
  insert(id: string, endpointId: string, eventId: string, now: number): void {
    this.statements.insert.run(id, endpointId, eventId, now, now, now);
  }

  find(id: string): WebhookDeliveryRecord | undefined {
    const row = this.statements.find.get(id);
    return row && toDelivery(row);
  }

  /**
   * Pending deliveries due at `now`, oldest due first, with their endpoint and event; not those in
   * `excluding` (the worker's attempts in flight, still pending here until their outcome is recorded).
   */
  due(now: number, limit: number, excluding: readonly string[] = []): DueDelivery[] {
    return this.statements.due.all(now, JSON.stringify(excluding), limit);
  }

  /** When the earliest pending delivery falls due (null: nothing pending, or all parked). */
  nextDueAt(): number | null {
    return this.statements.nextDueAt.get()?.at ?? null;
  }

  list(query: DeliveryListQuery): WebhookDeliveryRecord[] {
    return this.statements.list
      .all({
        endpointId: query.endpointId,
        eventId: query.eventId ?? null,
        status: query.status ?? null,
        beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
        limit: query.limit,
      })
      .map(toDelivery);
  }

  /** Every attempt of the given deliveries, oldest first, grouped by delivery id. */
  attemptsOf(deliveryIds: readonly string[]): Map<string, WebhookAttemptRecord[]> {
    const grouped = new Map<string, WebhookAttemptRecord[]>();
    if (deliveryIds.length === 0) return grouped;
    for (const row of this.statements.attempts.all(JSON.stringify(deliveryIds))) {
      const attempt: WebhookAttemptRecord = {
        deliveryId: row.delivery_id,
        attemptedAt: row.attempted_at,
        statusCode: row.status_code,
        latencyMs: row.latency_ms,
        ...readError(row.error),
        responseExcerpt: row.response_excerpt,
      };
      const list = grouped.get(row.delivery_id);
      if (list) list.push(attempt);
      else grouped.set(row.delivery_id, [attempt]);
    }
    return grouped;
  }

  /** One attempt; a withheld answer keeps no excerpt, only the reason (see `WITHHELD_PREFIX`). */
  recordAttempt(attempt: WebhookAttemptRecord): void {
    const { responseExcerptWithheld, ...row } = attempt;
    this.statements.insertAttempt.run({
      ...row,
      error:
        row.error ??
        (responseExcerptWithheld === null ? null : `${WITHHELD_PREFIX}${responseExcerptWithheld}`),
      responseExcerpt: responseExcerptWithheld === null ? row.responseExcerpt : null,
    });
  }

  /**
   * A successful attempt: the delivery is done if it is still pending, whichever claim holds it now (a success
   * is never dropped; a late one only means the receiver may get the event twice, which it de-duplicates by
   * id). Returns whether it applied (false: the delivery had already ended).
   */
  markSucceeded(id: string, now: number): boolean {
    return this.statements.succeeded.run(now, id).changes > 0;
  }

  /**
   * A failed attempt: the next one at `at` (parked instead while the endpoint is disabled), counted, if the
   * delivery is still held by `claim`. Returns false, changing nothing, when it is not: the attempt outlived
   * its claim and another attempt took the delivery (or recorded its outcome), or the delivery ended.
   */
  retryAt(id: string, at: number, now: number, claim: DeliveryClaim): boolean {
    return this.statements.retryAt.run(at, now, id, claim.attemptCount, claim.claimedUntil).changes > 0;
  }

  /** The last attempt failed: the delivery gives up, under the same condition as `retryAt`. */
  markFailed(id: string, now: number, claim: DeliveryClaim): boolean {
    return this.statements.failed.run(now, id, claim.attemptCount, claim.claimedUntil).changes > 0;
  }

  /** Holds an endpoint's pending deliveries while it is disabled. */
  parkForEndpoint(endpointId: string, now: number): void {
    this.statements.park.run(now, endpointId);
  }

  /** Releases an endpoint's parked deliveries, due at once. */
  unparkForEndpoint(endpointId: string, now: number): void {
    this.statements.unpark.run(now, now, endpointId);
  }

  /** A deleted endpoint receives nothing more. */
  failPendingForEndpoint(endpointId: string, now: number): void {
    this.statements.failAll.run(now, endpointId);
  }
}

/** The stored `error` column as the attempt's `error` and `responseExcerptWithheld`. */
function readError(stored: string | null): { error: string | null; responseExcerptWithheld: string | null } {
  if (stored?.startsWith(WITHHELD_PREFIX)) {
    return { error: null, responseExcerptWithheld: stored.slice(WITHHELD_PREFIX.length) };
  }
  return { error: stored, responseExcerptWithheld: null };
}
