import type { Environment, WebhookDeliveryStatus } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';
import { SqlWebhookAttempts, type WebhookAttemptRecord } from './webhook-attempts.ts';

/**
 * `webhook_deliveries`: one event on its way to one endpoint. A pending row is the queue: the worker keeps no
 * other state that a restart could lose. `next_attempt_at` is NULL while the endpoint is disabled (parked); on
 * PostgreSQL it also holds a claim's lease (see `due`).
 */
export const webhookDeliveries = table('webhook_deliveries', {
  seq: column.serial(),
  id: column.text(),
  endpointId: column.text(),
  eventId: column.text(),
  status: column.text<WebhookDeliveryStatus>(),
  attemptCount: column.int(),
  nextAttemptAt: column.nullable(column.int()),
  createdAt: column.int(),
  updatedAt: column.int(),
});

/** One delivery, with its event's type. */
export type WebhookDeliveryRecord = RecordOf<typeof webhookDeliveries.columns> & { eventType: string };

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
  /** The refund JSON of a `refund.*` event; null otherwise. */
  refund: string | null;
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

/** Webhook deliveries and their attempts as the service reads and writes them. */
export interface WebhookDeliveryRepository {
  /**
   * One pending delivery, due at `now`, per enabled, live endpoint of the event's business and environment that
   * subscribes to its type; returns how many. A delivery's id is `idPrefix` (a fresh `wd_…` id, one per event)
   * followed by the endpoint's id without its `we_`, so it is unique per (event, endpoint).
   */
  enqueueForEvent(idPrefix: string, event: EventEnqueue): Promise<number>;
  /** A new pending delivery, due at `now` (resend). */
  insert(id: string, endpointId: string, eventId: string, now: number): Promise<void>;
  find(id: string): Promise<WebhookDeliveryRecord | undefined>;
  /**
   * Pending deliveries due at `now`, oldest due first, with their endpoint and event; not those in `excluding`
   * (the worker's attempts in flight). On PostgreSQL each is claimed for the lease: until it ends or an outcome
   * is recorded, no call of `due`, on any instance, returns it.
   */
  due(now: number, limit: number, excluding?: readonly string[]): Promise<DueDelivery[]>;
  /** When the earliest pending delivery falls due (a claimed one: when its lease ends; null: none, or parked). */
  nextDueAt(): Promise<number | null>;
  /** Pending deliveries (parked ones included) and when the oldest was created: the metrics' backlog. */
  backlog(): Promise<{ pending: number; oldestCreatedAt: number | null }>;
  list(query: DeliveryListQuery): Promise<WebhookDeliveryRecord[]>;
  /** Every delivery of one event, to any endpoint, newest first (at most `limit`): the portal's event page. */
  forEvent(eventId: string, limit: number): Promise<WebhookDeliveryRecord[]>;
  /** Every attempt of the given deliveries, oldest first, grouped by delivery id. */
  attemptsOf(deliveryIds: readonly string[]): Promise<Map<string, WebhookAttemptRecord[]>>;
  /** One attempt; a withheld answer keeps no excerpt, only the reason (see `webhook-attempts.ts`). */
  recordAttempt(attempt: WebhookAttemptRecord): Promise<void>;
  /**
   * A successful attempt: the delivery is done if it is still pending, whichever claim holds it now (a success
   * is never dropped; a late one only means the receiver may get the event twice, which it de-duplicates by
   * id). Returns whether it applied (false: the delivery had already ended).
   */
  markSucceeded(id: string, now: number): Promise<boolean>;
  /**
   * A failed attempt: the next one at `at` (parked instead while the endpoint is disabled), counted, if the
   * delivery is still held by `claim`. Returns false, changing nothing, when it is not: the attempt outlived
   * its claim and another attempt took the delivery (or recorded its outcome), or the delivery ended.
   */
  retryAt(id: string, at: number, now: number, claim: DeliveryClaim): Promise<boolean>;
  /** The last attempt failed: the delivery gives up, under the same condition as `retryAt`. */
  markFailed(id: string, now: number, claim: DeliveryClaim): Promise<boolean>;
  /** Holds an endpoint's pending deliveries while it is disabled (claimed ones too: their lease is dropped). */
  parkForEndpoint(endpointId: string, now: number): Promise<void>;
  /** Releases an endpoint's parked deliveries, due at once. */
  unparkForEndpoint(endpointId: string, now: number): Promise<void>;
  /** A deleted endpoint receives nothing more. */
  failPendingForEndpoint(endpointId: string, now: number): Promise<void>;
}

/** How long a claim made by `due` holds a delivery on PostgreSQL, unless the constructor says otherwise. */
export const DEFAULT_DELIVERY_LEASE_MS = 60_000;

/**
 * The condition under which a failed attempt's outcome applies: the delivery is still held by the claim the
 * attempt was made under, or it was parked meanwhile (its endpoint disabled: a park takes no claim, and the
 * attempt still counts, the delivery staying parked). A claim's lease end is its token on PostgreSQL: a later
 * claim of the same delivery ends later, and any recorded outcome changes the count.
 */
const UNDER_CLAIM =
  'attempt_count = @claimAttemptCount AND (next_attempt_at = @claimedUntil OR next_attempt_at IS NULL)';

const DUE_COLUMNS = `d.id, d.endpoint_id AS "endpointId", d.event_id AS "eventId", d.attempt_count AS "attemptCount",
  e.url, e.environment, e.secret_ciphertext AS "secretCiphertext",
  e.previous_secret_ciphertext AS "previousSecretCiphertext",
  e.previous_secret_expires_at AS "previousSecretExpiresAt",
  ev.type AS "eventType", ev.created_at AS "eventCreatedAt", ev.payload, ev.credit, ev.refund`;

const WITH_EVENT = `SELECT ${webhookDeliveries.select('d')}, ev.type AS "eventType"
  FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id`;

const statements = {
  enqueueForEvent: sql({
    sqlite: `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
      SELECT @idPrefix || substr(e.id, 4), e.id, @eventId, 'pending', 0, @now, @now, @now
      FROM webhook_endpoints e
      WHERE e.business_id = @businessId AND e.environment = @environment AND e.enabled = 1
        AND e.deleted_at IS NULL AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = @type)`,
    // ORDER BY: the deliveries take their seqs in the order SQLite's statement inserts them (it walks
    // webhook_endpoints_by_owner, seq DESC). FOR SHARE: an endpoint being disabled or deleted on another
    // instance is waited for and read again (then skipped); and a disable that comes second waits for this
    // commit, so its park holds these rows. A snapshot read would queue a delivery the concurrent park never sees.
    postgres: `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
      SELECT CAST(@idPrefix AS text) || substr(e.id, 4), e.id, @eventId, 'pending', 0,
        CAST(@now AS bigint), CAST(@now AS bigint), CAST(@now AS bigint)
      FROM webhook_endpoints e
      WHERE e.business_id = @businessId AND e.environment = @environment AND e.enabled = 1 AND e.deleted_at IS NULL
        AND EXISTS (SELECT 1 FROM json_array_elements_text(CAST(e.events AS json)) AS subscribed (type) WHERE type = @type)
      ORDER BY e.seq DESC
      FOR SHARE OF e`,
  }),
  insert: sql(
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
     VALUES (@id, @endpointId, @eventId, 'pending', 0, @now, @now, @now)`,
  ),
  due: sql<DueDelivery>({
    sqlite: `SELECT ${DUE_COLUMNS}, d.next_attempt_at AS "claimedUntil"
      FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN events ev ON ev.id = d.event_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= @now
        AND d.id NOT IN (SELECT value FROM json_each(@excluding))
      ORDER BY d.next_attempt_at LIMIT @limit`,
    // Claims in one statement: `picked` locks the oldest due pending rows, skipping rows another instance has
    // locked this very moment (SKIP LOCKED); `claimed` moves their `next_attempt_at` to the end of the lease, so
    // once this commits no other instance finds them due. A row another instance claimed and committed after
    // this statement's snapshot is re-checked on its new version by the row lock, found not due, and skipped.
    // In due order, ties by seq (the order SQLite's index hands them back).
    postgres: `WITH picked AS (
        SELECT seq, next_attempt_at FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= @now AND NOT (id = ANY(CAST(@excluding AS text[])))
        ORDER BY next_attempt_at, seq
        LIMIT @limit
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE webhook_deliveries w SET next_attempt_at = CAST(@now AS bigint) + CAST(@leaseMs AS bigint)
        FROM picked WHERE w.seq = picked.seq
        RETURNING w.seq, w.id, w.endpoint_id, w.event_id, w.attempt_count, w.next_attempt_at,
          picked.next_attempt_at AS due_at
      )
      SELECT ${DUE_COLUMNS}, d.next_attempt_at AS "claimedUntil"
      FROM claimed d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN events ev ON ev.id = d.event_id
      ORDER BY d.due_at, d.seq`,
  }),
  nextDueAt: sql<{ at: number | null }>(
    `SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`,
  ),
  backlog: sql<{ pending: number; oldestCreatedAt: number | null }>(
    `SELECT count(*) AS pending, min(created_at) AS "oldestCreatedAt" FROM webhook_deliveries WHERE status = 'pending'`,
  ),
  find: sql<WebhookDeliveryRecord>(`${WITH_EVENT} WHERE d.id = @id`),
  list: sql<WebhookDeliveryRecord>(
    `${WITH_EVENT}
     WHERE d.endpoint_id = @endpointId AND d.seq < @beforeSeq
       AND (CAST(@eventId AS text) IS NULL OR d.event_id = @eventId)
       AND (CAST(@status AS text) IS NULL OR d.status = @status)
     ORDER BY d.seq DESC LIMIT @limit`,
  ),
  forEvent: sql<WebhookDeliveryRecord>(
    `${WITH_EVENT} WHERE d.event_id = @eventId ORDER BY d.seq DESC LIMIT @limit`,
  ),
  succeeded: sql(
    `UPDATE webhook_deliveries SET status = 'succeeded', attempt_count = attempt_count + 1,
       next_attempt_at = NULL, updated_at = @now
     WHERE id = @id AND status = 'pending'`,
  ),
  retryAt: sql({
    // An endpoint disabled while this attempt was in flight keeps the delivery parked (NULL).
    sqlite: `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1,
        next_attempt_at = CASE WHEN (SELECT enabled FROM webhook_endpoints WHERE id = endpoint_id) = 1
          THEN @at ELSE NULL END,
        updated_at = @now
      WHERE id = @id AND status = 'pending' AND ${UNDER_CLAIM}`,
    // The endpoint's row is locked first and read as committed (FOR NO KEY UPDATE waits for, then sees, a
    // concurrent disable): a plain subquery would read the statement's snapshot, and a delivery parked by a
    // disable that committed meanwhile on another instance would be scheduled again. Readers are not blocked.
    postgres: `WITH endpoint AS (
        SELECT e.enabled FROM webhook_endpoints e
        WHERE e.id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = @id)
        FOR NO KEY UPDATE
      )
      UPDATE webhook_deliveries SET attempt_count = attempt_count + 1,
        next_attempt_at = CASE WHEN (SELECT enabled FROM endpoint) = 1 THEN CAST(@at AS bigint) ELSE NULL END,
        updated_at = @now
      WHERE id = @id AND status = 'pending' AND ${UNDER_CLAIM}`,
  }),
  failed: sql(
    `UPDATE webhook_deliveries SET status = 'failed', attempt_count = attempt_count + 1,
       next_attempt_at = NULL, updated_at = @now
     WHERE id = @id AND status = 'pending' AND ${UNDER_CLAIM}`,
  ),
  park: sql(
    `UPDATE webhook_deliveries SET next_attempt_at = NULL, updated_at = @now
     WHERE endpoint_id = @endpointId AND status = 'pending'`,
  ),
  unpark: sql(
    `UPDATE webhook_deliveries SET next_attempt_at = @now, updated_at = @now
     WHERE endpoint_id = @endpointId AND status = 'pending' AND next_attempt_at IS NULL`,
  ),
  failAll: sql(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = @now
     WHERE endpoint_id = @endpointId AND status = 'pending'`,
  ),
};

export interface WebhookDeliveryOptions {
  /**
   * PostgreSQL: how long a delivery claimed by `due` stays away from every other caller of `due` (milliseconds,
   * ≥ 1). An attempt records its outcome well within it; if the instance holding the claim dies first, the
   * delivery falls due again when the lease ends and another instance sends it (at least once; receivers
   * de-duplicate by event id). Keep it above the attempt timeout plus the time to record the outcome.
   */
  leaseMs?: number;
}

/**
 * `WebhookDeliveryRepository` on either store. On PostgreSQL `due` claims what it returns (the lease lives in
 * `next_attempt_at`: `retryAt` overwrites it with the retry time, `markSucceeded`/`markFailed` clear it), so
 * several instances draining the outbox never send one delivery twice at once.
 *
 * @example
 * for (const delivery of await deliveries.due(Date.now(), 16)) {
 *   // send it, then in one write job: recordAttempt + markSucceeded, retryAt or markFailed
 * }
 */
export class SqlWebhookDeliveryRepository implements WebhookDeliveryRepository {
  readonly leaseMs: number;
  private readonly attempts: SqlWebhookAttempts;

  constructor(
    private readonly db: SqlRunner,
    options: WebhookDeliveryOptions = {},
  ) {
    const leaseMs = options.leaseMs ?? DEFAULT_DELIVERY_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new Error('leaseMs must be a whole number ≥ 1');
    this.leaseMs = leaseMs;
    this.attempts = new SqlWebhookAttempts(db);
  }

  async enqueueForEvent(idPrefix: string, event: EventEnqueue): Promise<number> {
    return this.db.run(statements.enqueueForEvent, { idPrefix, ...event });
  }

  async insert(id: string, endpointId: string, eventId: string, now: number): Promise<void> {
    await this.db.run(statements.insert, { id, endpointId, eventId, now });
  }

  async find(id: string): Promise<WebhookDeliveryRecord | undefined> {
    return this.db.get(statements.find, { id });
  }

  async due(now: number, limit: number, excluding: readonly string[] = []): Promise<DueDelivery[]> {
    return this.db.all(statements.due, { now, limit, excluding, leaseMs: this.leaseMs });
  }

  async nextDueAt(): Promise<number | null> {
    return (await this.db.get(statements.nextDueAt))?.at ?? null;
  }

  async backlog(): Promise<{ pending: number; oldestCreatedAt: number | null }> {
    const row = await this.db.get(statements.backlog);
    return { pending: Number(row?.pending ?? 0), oldestCreatedAt: row?.oldestCreatedAt ?? null };
  }

  async forEvent(eventId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    return this.db.all(statements.forEvent, { eventId, limit });
  }

  async list(query: DeliveryListQuery): Promise<WebhookDeliveryRecord[]> {
    return this.db.all(statements.list, {
      endpointId: query.endpointId,
      eventId: query.eventId ?? null,
      status: query.status ?? null,
      beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
    });
  }

  attemptsOf(deliveryIds: readonly string[]): Promise<Map<string, WebhookAttemptRecord[]>> {
    return this.attempts.of(deliveryIds);
  }

  recordAttempt(attempt: WebhookAttemptRecord): Promise<void> {
    return this.attempts.record(attempt);
  }

  async markSucceeded(id: string, now: number): Promise<boolean> {
    return (await this.db.run(statements.succeeded, { id, now })) > 0;
  }

  async retryAt(id: string, at: number, now: number, claim: DeliveryClaim): Promise<boolean> {
    return (await this.db.run(statements.retryAt, { id, at, now, ...claimParams(claim) })) > 0;
  }

  async markFailed(id: string, now: number, claim: DeliveryClaim): Promise<boolean> {
    return (await this.db.run(statements.failed, { id, now, ...claimParams(claim) })) > 0;
  }

  async parkForEndpoint(endpointId: string, now: number): Promise<void> {
    await this.db.run(statements.park, { endpointId, now });
  }

  async unparkForEndpoint(endpointId: string, now: number): Promise<void> {
    await this.db.run(statements.unpark, { endpointId, now });
  }

  async failPendingForEndpoint(endpointId: string, now: number): Promise<void> {
    await this.db.run(statements.failAll, { endpointId, now });
  }
}

const claimParams = (claim: DeliveryClaim) => ({
  claimedUntil: claim.claimedUntil,
  claimAttemptCount: claim.attemptCount,
});
