import type { Environment, WebhookEventType } from '@servicepay/node/protocol';
import type { Async } from '../repositories.ts';
import type {
  NewWebhookEndpoint,
  WebhookEndpointChange,
  WebhookEndpointRecord,
  WebhookEndpointRepository,
} from '../webhook-endpoints.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

type EndpointRow = {
  seq: string;
  id: string;
  business_id: string;
  environment: Environment;
  url: string;
  events: string;
  description: string | null;
  enabled: number;
  disabled_reason: string | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  consecutive_failures: number;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
};

const toEndpoint = (row: EndpointRow): WebhookEndpointRecord => ({
  seq: exactInteger(row.seq),
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  url: row.url,
  events: JSON.parse(row.events) as WebhookEventType[],
  description: row.description,
  enabled: row.enabled === 1,
  disabledReason: row.disabled_reason,
  secretCiphertext: row.secret_ciphertext,
  previousSecretCiphertext: row.previous_secret_ciphertext,
  previousSecretExpiresAt: exactIntegerOrNull(row.previous_secret_expires_at),
  consecutiveFailures: row.consecutive_failures,
  failingSince: exactIntegerOrNull(row.failing_since),
  createdAt: exactInteger(row.created_at),
  updatedAt: exactInteger(row.updated_at),
});

/**
 * A merchant's change, computed from the row as it is when the statement runs rather than from the caller's
 * copy: a failure another instance recorded between the caller's read and this write is kept, not overwritten
 * by a stale count. Same rules as SQLite: enabling a disabled endpoint clears its reason and failure count;
 * disabling it by hand records no reason; leaving `enabled` out keeps a service-disabled endpoint's reason.
 */
const UPDATE = `
UPDATE webhook_endpoints SET
  url = coalesce($2::text, url),
  events = coalesce($3::text, events),
  description = coalesce($4::text, description),
  enabled = CASE WHEN $5::boolean IS NULL THEN enabled WHEN $5::boolean THEN 1 ELSE 0 END,
  disabled_reason = CASE WHEN $5::boolean IS NULL AND enabled = 0 THEN disabled_reason ELSE NULL END,
  consecutive_failures = CASE WHEN $5::boolean AND enabled = 0 THEN 0 ELSE consecutive_failures END,
  failing_since = CASE WHEN $5::boolean AND enabled = 0 THEN NULL ELSE failing_since END,
  updated_at = $6
WHERE id = $1 AND deleted_at IS NULL
RETURNING *`;

/**
 * `webhook_endpoints` on PostgreSQL: the twin of the SQLite `WebhookEndpointRepository`. Deleted endpoints are
 * kept (their deliveries still name them) but invisible to every read. Every write is one conditional
 * statement, so two instances changing one endpoint at once never act on a stale read: `disable` and
 * `softDelete` say true to exactly one of them.
 *
 * @example
 * const endpoints = new PostgresWebhookEndpointRepository(pool);
 * const endpoint = await endpoints.insert({ id: 'we_1', businessId, environment: 'test', url: 'https://shop.example/hooks',
 *   events: ['session.successful'], description: null, secretCiphertext, createdAt: now });
 * await endpoints.disable(endpoint.id, 'failing', now); // true once
 */
export class PostgresWebhookEndpointRepository implements Async<WebhookEndpointRepository> {
  constructor(private readonly db: Queryable) {}

  async insert(endpoint: NewWebhookEndpoint): Promise<WebhookEndpointRecord> {
    const { rows } = await runQuery<EndpointRow>(
      this.db,
      `INSERT INTO webhook_endpoints (id, business_id, environment, url, events, description, secret_ciphertext,
         created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
       RETURNING *`,
      [
        endpoint.id,
        endpoint.businessId,
        endpoint.environment,
        endpoint.url,
        JSON.stringify(endpoint.events),
        endpoint.description,
        endpoint.secretCiphertext,
        endpoint.createdAt,
      ],
    );
    if (!rows[0]) throw new Error('webhook endpoint vanished after insert');
    return toEndpoint(rows[0]);
  }

  /** A live (not deleted) endpoint of any business; the caller checks ownership. */
  async find(id: string): Promise<WebhookEndpointRecord | undefined> {
    const { rows } = await runQuery<EndpointRow>(
      this.db,
      'SELECT * FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL',
      [id],
    );
    return rows[0] && toEndpoint(rows[0]);
  }

  /** Newest first, only endpoints older than `beforeSeq` (the cursor), and only those at `url` when given. */
  async list(
    businessId: string,
    environment: Environment,
    beforeSeq: number,
    limit: number,
    url?: string,
  ): Promise<WebhookEndpointRecord[]> {
    const { rows } = await runQuery<EndpointRow>(
      this.db,
      `SELECT * FROM webhook_endpoints
       WHERE business_id = $1 AND environment = $2 AND deleted_at IS NULL AND seq < $3
         AND ($5::text IS NULL OR url = $5)
       ORDER BY seq DESC LIMIT $4`,
      [businessId, environment, beforeSeq, limit, url ?? null],
    );
    return rows.map(toEndpoint);
  }

  async count(businessId: string, environment: Environment): Promise<number> {
    const { rows } = await runQuery<{ n: string }>(
      this.db,
      'SELECT count(*) AS n FROM webhook_endpoints WHERE business_id = $1 AND environment = $2 AND deleted_at IS NULL',
      [businessId, environment],
    );
    return exactInteger(rows[0]?.n ?? 0);
  }

  /**
   * Applies a merchant's change to the endpoint `current` names (see `UPDATE`: computed from the stored row).
   * Throws when the endpoint was deleted meanwhile, as SQLite's does.
   */
  async update(
    current: WebhookEndpointRecord,
    change: WebhookEndpointChange,
    now: number,
  ): Promise<WebhookEndpointRecord> {
    const { rows } = await runQuery<EndpointRow>(this.db, UPDATE, [
      current.id,
      change.url ?? null,
      change.events === undefined ? null : JSON.stringify(change.events),
      change.description ?? null,
      change.enabled ?? null,
      now,
    ]);
    if (!rows[0]) throw new Error('webhook endpoint vanished after update');
    return toEndpoint(rows[0]);
  }

  /** The current secret becomes the previous one, still signing until `previousExpiresAt`. */
  async rollSecret(
    id: string,
    secretCiphertext: string,
    previousExpiresAt: number,
    now: number,
  ): Promise<void> {
    // One statement: the right-hand side reads the row before this update, so the old secret moves over.
    await this.db.query(
      `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext,
         previous_secret_expires_at = $3, secret_ciphertext = $2, updated_at = $4
       WHERE id = $1 AND deleted_at IS NULL`,
      [id, secretCiphertext, previousExpiresAt, now],
    );
  }

  async softDelete(id: string, now: number): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.db,
      'UPDATE webhook_endpoints SET deleted_at = $1, updated_at = $1, enabled = 0 WHERE id = $2 AND deleted_at IS NULL',
      [now, id],
    );
    return rowCount === 1;
  }

  async recordSuccess(id: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL
       WHERE id = $1 AND consecutive_failures <> 0`,
      [id],
    );
  }

  async recordFailure(id: string, now: number): Promise<void> {
    await this.db.query(
      `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1,
         failing_since = coalesce(failing_since, $1)
       WHERE id = $2`,
      [now, id],
    );
  }

  /** Turns an endpoint off on the service's own initiative; false when it already was off. */
  async disable(id: string, reason: string, now: number): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.db,
      `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = $1, updated_at = $2
       WHERE id = $3 AND enabled = 1`,
      [reason, now, id],
    );
    return rowCount === 1;
  }
}
