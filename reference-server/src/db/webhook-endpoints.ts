import type { Environment, WebhookEventType } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

/** A merchant's webhook endpoint as stored. Secrets stay sealed (SecretBox ciphertext); times in epoch ms. */
export interface WebhookEndpointRecord {
  seq: number;
  id: string;
  businessId: string;
  environment: Environment;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: number | null;
  consecutiveFailures: number;
  failingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

type EndpointRow = {
  seq: number;
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
  previous_secret_expires_at: number | null;
  consecutive_failures: number;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
};

const toEndpoint = (row: EndpointRow): WebhookEndpointRecord => ({
  seq: row.seq,
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
  previousSecretExpiresAt: row.previous_secret_expires_at,
  consecutiveFailures: row.consecutive_failures,
  failingSince: row.failing_since,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface NewWebhookEndpoint {
  id: string;
  businessId: string;
  environment: Environment;
  url: string;
  events: readonly WebhookEventType[];
  description: string | null;
  secretCiphertext: string;
  createdAt: number;
}

export interface WebhookEndpointChange {
  url?: string;
  events?: readonly WebhookEventType[];
  description?: string;
  enabled?: boolean;
}

/**
 * `webhook_endpoints`: one repository, statements prepared once. Deleted endpoints are kept (their deliveries
 * still name them) but are invisible to every read here.
 */
export class WebhookEndpointRepository {
  private readonly statements;

  constructor(db: SqliteDatabase) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO webhook_endpoints (id, business_id, environment, url, events, description, secret_ciphertext,
           created_at, updated_at)
         VALUES (@id, @businessId, @environment, @url, @events, @description, @secretCiphertext, @createdAt, @createdAt)`,
      ),
      find: db.prepare<[string], EndpointRow>(
        'SELECT * FROM webhook_endpoints WHERE id = ? AND deleted_at IS NULL',
      ),
      list: db.prepare<[string, string, number, number], EndpointRow>(
        `SELECT * FROM webhook_endpoints
         WHERE business_id = ? AND environment = ? AND deleted_at IS NULL AND seq < ?
         ORDER BY seq DESC LIMIT ?`,
      ),
      listByUrl: db.prepare<[string, string, string, number, number], EndpointRow>(
        `SELECT * FROM webhook_endpoints
         WHERE business_id = ? AND environment = ? AND url = ? AND deleted_at IS NULL AND seq < ?
         ORDER BY seq DESC LIMIT ?`,
      ),
      count: db.prepare<[string, string], { n: number }>(
        'SELECT count(*) AS n FROM webhook_endpoints WHERE business_id = ? AND environment = ? AND deleted_at IS NULL',
      ),
      update: db.prepare(
        `UPDATE webhook_endpoints SET url = @url, events = @events, description = @description,
           enabled = @enabled, disabled_reason = @disabledReason, consecutive_failures = @consecutiveFailures,
           failing_since = @failingSince, updated_at = @updatedAt
         WHERE id = @id AND deleted_at IS NULL`,
      ),
      rollSecret: db.prepare(
        `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext,
           previous_secret_expires_at = @previousExpiresAt, secret_ciphertext = @secretCiphertext,
           updated_at = @now
         WHERE id = @id AND deleted_at IS NULL`,
      ),
      softDelete: db.prepare<[number, number, string]>(
        'UPDATE webhook_endpoints SET deleted_at = ?, updated_at = ?, enabled = 0 WHERE id = ? AND deleted_at IS NULL',
      ),
      recordSuccess: db.prepare<[string]>(
        `UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL
         WHERE id = ? AND consecutive_failures <> 0`,
      ),
      recordFailure: db.prepare<[number, string]>(
        `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1,
           failing_since = coalesce(failing_since, ?)
         WHERE id = ?`,
      ),
      disable: db.prepare<[string, number, string]>(
        `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ?
         WHERE id = ? AND enabled = 1`,
      ),
    };
  }

  insert(endpoint: NewWebhookEndpoint): WebhookEndpointRecord {
    this.statements.insert.run({ ...endpoint, events: JSON.stringify(endpoint.events) });
    const stored = this.find(endpoint.id);
    if (!stored) throw new Error('webhook endpoint vanished after insert');
    return stored;
  }

  /** A live (not deleted) endpoint of any business; the caller checks ownership. */
  find(id: string): WebhookEndpointRecord | undefined {
    const row = this.statements.find.get(id);
    return row && toEndpoint(row);
  }

  /** Newest first, only endpoints older than `beforeSeq` (the cursor), and only those at `url` when given. */
  list(
    businessId: string,
    environment: Environment,
    beforeSeq: number,
    limit: number,
    url?: string,
  ): WebhookEndpointRecord[] {
    const rows =
      url === undefined
        ? this.statements.list.all(businessId, environment, beforeSeq, limit)
        : this.statements.listByUrl.all(businessId, environment, url, beforeSeq, limit);
    return rows.map(toEndpoint);
  }

  count(businessId: string, environment: Environment): number {
    return this.statements.count.get(businessId, environment)?.n ?? 0;
  }

  /**
   * Applies a merchant's change. Enabling an endpoint clears why it was disabled and its failure count;
   * disabling it by hand records no reason (only the service's own disabling does).
   */
  update(current: WebhookEndpointRecord, change: WebhookEndpointChange, now: number): WebhookEndpointRecord {
    const enabled = change.enabled ?? current.enabled;
    const reEnabled = change.enabled === true && !current.enabled;
    this.statements.update.run({
      id: current.id,
      url: change.url ?? current.url,
      events: JSON.stringify(change.events ?? current.events),
      description: change.description ?? current.description,
      enabled: enabled ? 1 : 0,
      disabledReason: enabled ? null : change.enabled === false ? null : current.disabledReason,
      consecutiveFailures: reEnabled ? 0 : current.consecutiveFailures,
      failingSince: reEnabled ? null : current.failingSince,
      updatedAt: now,
    });
    const stored = this.find(current.id);
    if (!stored) throw new Error('webhook endpoint vanished after update');
    return stored;
  }

  /** The current secret becomes the previous one, still signing until `previousExpiresAt`. */
  rollSecret(id: string, secretCiphertext: string, previousExpiresAt: number, now: number): void {
    this.statements.rollSecret.run({ id, secretCiphertext, previousExpiresAt, now });
  }

  softDelete(id: string, now: number): boolean {
    return this.statements.softDelete.run(now, now, id).changes === 1;
  }

  recordSuccess(id: string): void {
    this.statements.recordSuccess.run(id);
  }

  recordFailure(id: string, now: number): void {
    this.statements.recordFailure.run(now, id);
  }

  /** Turns an endpoint off on the service's own initiative; false when it already was off. */
  disable(id: string, reason: string, now: number): boolean {
    return this.statements.disable.run(reason, now, id).changes === 1;
  }
}
