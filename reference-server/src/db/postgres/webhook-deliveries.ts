import type { WebhookDeliveryStatus } from '@servicepay/node/protocol';
import type { Async } from '../repositories.ts';
import type {
  DeliveryClaim,
  DeliveryListQuery,
  DueDelivery,
  EventEnqueue,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookDeliveryRepository,
} from '../webhook-deliveries.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

/**
 * How a withheld answer is stored in `webhook_attempts.error` (see the SQLite repository's `WITHHELD_PREFIX`):
 * it must stay byte for byte the same there, since a database copied from SQLite carries rows written with it.
 * Migration 011 writes it too, on the excerpts it cleared (`withheld:receiver_not_checked`).
 */
const WITHHELD_PREFIX = 'withheld:';

/** How long a claim made by `due` holds a delivery, unless the constructor says otherwise. */
export const DEFAULT_DELIVERY_LEASE_MS = 60_000;

export interface PostgresWebhookDeliveryOptions {
  /**
   * How long a delivery claimed by `due` stays away from every other caller of `due` (milliseconds, ≥ 1). An
   * attempt records its outcome (`markSucceeded`, `retryAt`, `markFailed`) well within it; if the instance
   * holding the claim dies first, the delivery falls due again when the lease ends and another instance sends
   * it (at least once; receivers de-duplicate by event id). Keep it above the attempt timeout plus the time
   * to record the outcome, or a slow attempt may be sent a second time in parallel (the receiver then gets the
   * event twice; of the two outcomes, the later claim's failure applies, or either's success).
   */
  leaseMs?: number;
}

type DeliveryRow = {
  seq: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
};

type DueRow = {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt_count: number;
  url: string;
  environment: DueDelivery['environment'];
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  event_type: string;
  event_created_at: string;
  payload: string;
  credit: string | null;
  claimed_until: string;
};

type AttemptRow = {
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
};

const toDelivery = (row: DeliveryRow): WebhookDeliveryRecord => ({
  seq: exactInteger(row.seq),
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  attemptCount: row.attempt_count,
  nextAttemptAt: exactIntegerOrNull(row.next_attempt_at),
  createdAt: exactInteger(row.created_at),
  updatedAt: exactInteger(row.updated_at),
});

const toDue = (row: DueRow): DueDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  attemptCount: row.attempt_count,
  url: row.url,
  environment: row.environment,
  secretCiphertext: row.secret_ciphertext,
  previousSecretCiphertext: row.previous_secret_ciphertext,
  previousSecretExpiresAt: exactIntegerOrNull(row.previous_secret_expires_at),
  eventType: row.event_type,
  eventCreatedAt: exactInteger(row.event_created_at),
  payload: row.payload,
  credit: row.credit,
  claimedUntil: exactInteger(row.claimed_until),
});

/**
 * Claims due deliveries in one statement. `picked` locks the oldest due pending rows, skipping rows another
 * instance has locked this very moment (`SKIP LOCKED`); `claimed` moves their `next_attempt_at` to the end of
 * the lease, so once this statement commits no other instance finds them due either. A row that another
 * instance claimed and committed after this statement's snapshot is re-checked on its new version by the row
 * lock, found not due, and skipped. The answer is in due order, as SQLite's (`ORDER BY next_attempt_at`, ties
 * by `seq`, which is the order SQLite's index hands them back).
 */
const DUE = `
WITH picked AS (
  SELECT seq, next_attempt_at FROM webhook_deliveries
  WHERE status = 'pending' AND next_attempt_at <= $1 AND NOT (id = ANY($4::text[]))
  ORDER BY next_attempt_at, seq
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE webhook_deliveries d SET next_attempt_at = $1::bigint + $3::bigint
  FROM picked WHERE d.seq = picked.seq
  RETURNING d.seq, d.id, d.endpoint_id, d.event_id, d.attempt_count, d.next_attempt_at AS claimed_until,
    picked.next_attempt_at AS due_at
)
SELECT c.id, c.endpoint_id, c.event_id, c.attempt_count, e.url, e.environment, e.secret_ciphertext,
  e.previous_secret_ciphertext, e.previous_secret_expires_at, ev.type AS event_type,
  ev.created_at AS event_created_at, ev.payload, ev.credit, c.claimed_until
FROM claimed c
JOIN webhook_endpoints e ON e.id = c.endpoint_id
JOIN events ev ON ev.id = c.event_id
ORDER BY c.due_at, c.seq`;

/**
 * Under which condition a failed attempt's outcome applies (`until` and `count`: the placeholders of the
 * claim's `claimedUntil` and attempt count): the delivery is still held by that claim, or was parked
 * meanwhile. The same as SQLite's `UNDER_CLAIM`. A claim's lease end is its token: a later claim of the same
 * delivery ends later (it is taken only once the earlier lease ended, and the lease is ≥ 1 ms), and any
 * recorded outcome changes the count.
 */
const underClaim = (until: string, count: string) =>
  `attempt_count = ${count}::int AND (next_attempt_at = ${until}::bigint OR next_attempt_at IS NULL)`;

/**
 * The next attempt's time, or NULL (parked) when the endpoint is disabled. The endpoint's row is locked first
 * and read as committed (`FOR NO KEY UPDATE` waits for, then sees, a concurrent disable): a plain subquery
 * would read the statement's snapshot, and a delivery parked by a disable that committed meanwhile on another
 * instance would be scheduled again. Readers are not blocked; the endpoint's other writers (and
 * `enqueueForEvent`, which shares the row) wait for this transaction, as they would for any change to it.
 */
const RETRY_AT = `
WITH endpoint AS (
  SELECT e.enabled FROM webhook_endpoints e
  WHERE e.id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = $3)
  FOR NO KEY UPDATE
)
UPDATE webhook_deliveries SET attempt_count = attempt_count + 1,
  next_attempt_at = CASE WHEN (SELECT enabled FROM endpoint) = 1 THEN $1::bigint ELSE NULL END,
  updated_at = $2
WHERE id = $3 AND status = 'pending' AND ${underClaim('$4', '$5')}`;

/**
 * `webhook_deliveries` and `webhook_attempts` on PostgreSQL: the twin of the SQLite
 * `WebhookDeliveryRepository`, with one difference every instance relies on: `due` claims what it returns
 * (see `DUE` and `PostgresWebhookDeliveryOptions.leaseMs`), so several instances draining the outbox never
 * send one delivery twice at once. The lease lives in `next_attempt_at` itself: `retryAt` overwrites it with
 * the retry time and `markSucceeded`/`markFailed` clear it, so a recorded outcome always replaces the claim,
 * and `nextDueAt` reports a claimed delivery at the end of its lease, never as due now. A failure is recorded
 * only under the claim its attempt was made under (`retryAt`, `markFailed`: the claim's lease end is its
 * token), so an attempt that outlived its lease cannot move the schedule of the claim that took over; a
 * success is recorded whoever holds the claim.
 *
 * @example
 * const deliveries = new PostgresWebhookDeliveryRepository(pool, { leaseMs: 60_000 });
 * for (const delivery of await deliveries.due(Date.now(), 16)) {
 *   // send it, then in one transaction: recordAttempt + markSucceeded, retryAt or markFailed
 * }
 */
export class PostgresWebhookDeliveryRepository implements Async<WebhookDeliveryRepository> {
  readonly leaseMs: number;

  constructor(
    private readonly db: Queryable,
    options: PostgresWebhookDeliveryOptions = {},
  ) {
    const leaseMs = options.leaseMs ?? DEFAULT_DELIVERY_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new Error('leaseMs must be a whole number ≥ 1');
    this.leaseMs = leaseMs;
  }

  /**
   * One pending delivery, due at `now`, per enabled, live endpoint of the event's business and environment that
   * subscribes to its type; returns how many. Ids as in SQLite: `idPrefix` + the endpoint id without `we_`.
   */
  async enqueueForEvent(idPrefix: string, event: EventEnqueue): Promise<number> {
    const { rowCount } = await runQuery(
      this.db,
      // ORDER BY: the deliveries take their seqs in the order SQLite's statement inserts them, which walks
      // webhook_endpoints_by_owner (seq DESC): newest endpoint first, so both stores number them alike.
      // FOR SHARE: an endpoint being disabled or deleted on another instance is waited for and read again
      // (then skipped); and a disable that comes second waits for this commit, so its park holds these rows.
      // Without it, a snapshot read would queue a delivery the concurrent park never sees.
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
       SELECT $1::text || substr(e.id, 4), e.id, $2, 'pending', 0, $6::bigint, $6::bigint, $6::bigint
       FROM webhook_endpoints e
       WHERE e.business_id = $3 AND e.environment = $4 AND e.enabled = 1 AND e.deleted_at IS NULL
         AND EXISTS (SELECT 1 FROM json_array_elements_text(e.events::json) AS subscribed (type) WHERE type = $5)
       ORDER BY e.seq DESC
       FOR SHARE OF e`,
      [idPrefix, event.eventId, event.businessId, event.environment, event.type, event.now],
    );
    return rowCount ?? 0;
  }

  /** A new pending delivery, due at `now` (resend). */
  async insert(id: string, endpointId: string, eventId: string, now: number): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'pending', 0, $4, $4, $4)`,
      [id, endpointId, eventId, now],
    );
  }

  async find(id: string): Promise<WebhookDeliveryRecord | undefined> {
    const { rows } = await runQuery<DeliveryRow>(
      this.db,
      `SELECT d.*, ev.type AS event_type FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
       WHERE d.id = $1`,
      [id],
    );
    return rows[0] && toDelivery(rows[0]);
  }

  /**
   * Pending deliveries due at `now`, oldest due first, with their endpoint and event, each claimed for
   * `leaseMs`: until the lease ends or an outcome is recorded, no call of `due`, on any instance, returns it.
   */
  async due(now: number, limit: number, excluding: readonly string[] = []): Promise<DueDelivery[]> {
    const { rows } = await runQuery<DueRow>(this.db, DUE, [now, limit, this.leaseMs, excluding]);
    return rows.map(toDue);
  }

  /** When the earliest pending delivery falls due (a claimed one: when its lease ends; null: none, or parked). */
  async nextDueAt(): Promise<number | null> {
    const { rows } = await runQuery<{ at: string | null }>(
      this.db,
      `SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return exactIntegerOrNull(rows[0]?.at ?? null);
  }

  async list(query: DeliveryListQuery): Promise<WebhookDeliveryRecord[]> {
    const { rows } = await runQuery<DeliveryRow>(
      this.db,
      `SELECT d.*, ev.type AS event_type FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
       WHERE d.endpoint_id = $1 AND d.seq < $2
         AND ($3::text IS NULL OR d.event_id = $3) AND ($4::text IS NULL OR d.status = $4)
       ORDER BY d.seq DESC LIMIT $5`,
      [
        query.endpointId,
        query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
        query.eventId ?? null,
        query.status ?? null,
        query.limit,
      ],
    );
    return rows.map(toDelivery);
  }

  /** Every attempt of the given deliveries, oldest first, grouped by delivery id. */
  async attemptsOf(deliveryIds: readonly string[]): Promise<Map<string, WebhookAttemptRecord[]>> {
    const grouped = new Map<string, WebhookAttemptRecord[]>();
    if (deliveryIds.length === 0) return grouped;
    const { rows } = await runQuery<AttemptRow>(
      this.db,
      `SELECT delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt FROM webhook_attempts
       WHERE delivery_id = ANY($1::text[]) ORDER BY id`,
      [[...deliveryIds]],
    );
    for (const row of rows) {
      const attempt: WebhookAttemptRecord = {
        deliveryId: row.delivery_id,
        attemptedAt: exactInteger(row.attempted_at),
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
  async recordAttempt(attempt: WebhookAttemptRecord): Promise<void> {
    const { responseExcerptWithheld, ...row } = attempt;
    await this.db.query(
      `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        row.deliveryId,
        row.attemptedAt,
        row.statusCode,
        row.latencyMs,
        row.error ??
          (responseExcerptWithheld === null ? null : `${WITHHELD_PREFIX}${responseExcerptWithheld}`),
        responseExcerptWithheld === null ? row.responseExcerpt : null,
      ],
    );
  }

  /**
   * A successful attempt: done if still pending, whichever claim holds the delivery now (a success is never
   * dropped; see the SQLite twin). Returns whether it applied.
   */
  async markSucceeded(id: string, now: number): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.db,
      `UPDATE webhook_deliveries SET status = 'succeeded', attempt_count = attempt_count + 1,
         next_attempt_at = NULL, updated_at = $1
       WHERE id = $2 AND status = 'pending'`,
      [now, id],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * The next attempt at `at`, replacing the claim's lease (parked instead when the endpoint is disabled), if
   * the delivery is still held by `claim`. False, and nothing changed, for an attempt that outlived its lease
   * while another instance claimed the delivery again (or for a delivery that ended).
   */
  async retryAt(id: string, at: number, now: number, claim: DeliveryClaim): Promise<boolean> {
    const { rowCount } = await runQuery(this.db, RETRY_AT, [
      at,
      now,
      id,
      claim.claimedUntil,
      claim.attemptCount,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** The last attempt failed: the delivery gives up, under the same condition as `retryAt`. */
  async markFailed(id: string, now: number, claim: DeliveryClaim): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.db,
      `UPDATE webhook_deliveries SET status = 'failed', attempt_count = attempt_count + 1,
         next_attempt_at = NULL, updated_at = $1
       WHERE id = $2 AND status = 'pending' AND ${underClaim('$3', '$4')}`,
      [now, id, claim.claimedUntil, claim.attemptCount],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Holds an endpoint's pending deliveries while it is disabled (claimed ones too: their lease is dropped). */
  async parkForEndpoint(endpointId: string, now: number): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET next_attempt_at = NULL, updated_at = $1
       WHERE endpoint_id = $2 AND status = 'pending'`,
      [now, endpointId],
    );
  }

  /** Releases an endpoint's parked deliveries, due at once. */
  async unparkForEndpoint(endpointId: string, now: number): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET next_attempt_at = $1, updated_at = $1
       WHERE endpoint_id = $2 AND status = 'pending' AND next_attempt_at IS NULL`,
      [now, endpointId],
    );
  }

  /** A deleted endpoint receives nothing more. */
  async failPendingForEndpoint(endpointId: string, now: number): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = $1
       WHERE endpoint_id = $2 AND status = 'pending'`,
      [now, endpointId],
    );
  }
}

/** The stored `error` column as the attempt's `error` and `responseExcerptWithheld`. */
function readError(stored: string | null): { error: string | null; responseExcerptWithheld: string | null } {
  if (stored?.startsWith(WITHHELD_PREFIX)) {
    return { error: null, responseExcerptWithheld: stored.slice(WITHHELD_PREFIX.length) };
  }
  return { error: stored, responseExcerptWithheld: null };
}
