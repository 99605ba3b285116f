import type { Environment, WebhookEventType } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/**
 * `webhook_endpoints`: a merchant's webhook endpoints. Secrets stay sealed (SecretBox ciphertext); times in
 * epoch ms. Deleted endpoints are kept (their deliveries still name them) but invisible to every read here.
 */
export const webhookEndpoints = table('webhook_endpoints', {
  seq: column.serial(),
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  url: column.text(),
  events: column.json<WebhookEventType[]>(),
  description: column.nullable(column.text()),
  enabled: column.flag(),
  disabledReason: column.nullable(column.text()),
  secretCiphertext: column.text(),
  previousSecretCiphertext: column.nullable(column.text()),
  previousSecretExpiresAt: column.nullable(column.int()),
  consecutiveFailures: column.int(),
  failingSince: column.nullable(column.int()),
  createdAt: column.int(),
  updatedAt: column.int(),
  deletedAt: column.nullable(column.int()),
});

export type WebhookEndpointRecord = RecordOf<typeof webhookEndpoints.columns>;

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
 * Webhook endpoints as the service reads and writes them. Every write is one conditional statement, so two
 * instances changing one endpoint at once never act on a stale read: `disable` and `softDelete` say true to
 * exactly one of them.
 */
export interface WebhookEndpointRepository {
  insert(endpoint: NewWebhookEndpoint): Promise<WebhookEndpointRecord>;
  /** A live (not deleted) endpoint of any business; the caller checks ownership. */
  find(id: string): Promise<WebhookEndpointRecord | undefined>;
  /** Newest first, only endpoints older than `beforeSeq` (the cursor), and only those at `url` when given. */
  list(
    businessId: string,
    environment: Environment,
    beforeSeq: number,
    limit: number,
    url?: string,
  ): Promise<WebhookEndpointRecord[]>;
  count(businessId: string, environment: Environment): Promise<number>;
  /**
   * Applies a merchant's change to the endpoint `current` names, computed from the row as stored when the
   * statement runs (a failure another instance recorded meanwhile is kept). Enabling a disabled endpoint clears
   * why it was disabled and its failure count; disabling it by hand records no reason (only the service's own
   * disabling does); leaving `enabled` out keeps a service-disabled endpoint's reason. Throws when the endpoint
   * was deleted meanwhile.
   */
  update(
    current: WebhookEndpointRecord,
    change: WebhookEndpointChange,
    now: number,
  ): Promise<WebhookEndpointRecord>;
  /** The current secret becomes the previous one, still signing until `previousExpiresAt`. */
  rollSecret(id: string, secretCiphertext: string, previousExpiresAt: number, now: number): Promise<void>;
  softDelete(id: string, now: number): Promise<boolean>;
  recordSuccess(id: string): Promise<void>;
  recordFailure(id: string, now: number): Promise<void>;
  /** Turns an endpoint off on the service's own initiative; false when it already was off. */
  disable(id: string, reason: string, now: number): Promise<boolean>;
  /** The sealed secret of the oldest endpoint, deleted ones included: what a start checks its key against. */
  oldestSecret(): Promise<string | undefined>;
}

const SELECT = `SELECT ${webhookEndpoints.select()} FROM webhook_endpoints`;

const statements = {
  insert: sql<WebhookEndpointRecord>(webhookEndpoints.insert(`RETURNING ${webhookEndpoints.select()}`)),
  find: sql<WebhookEndpointRecord>(`${SELECT} WHERE id = @id AND deleted_at IS NULL`),
  list: sql<WebhookEndpointRecord>(
    `${SELECT} WHERE business_id = @businessId AND environment = @environment AND deleted_at IS NULL
       AND seq < @beforeSeq AND (CAST(@url AS text) IS NULL OR url = @url)
     ORDER BY seq DESC LIMIT @limit`,
  ),
  count: sql<{ n: number }>(
    `SELECT count(*) AS n FROM webhook_endpoints
     WHERE business_id = @businessId AND environment = @environment AND deleted_at IS NULL`,
  ),
  update: sql<WebhookEndpointRecord>(
    `UPDATE webhook_endpoints SET
       url = coalesce(CAST(@url AS text), url),
       events = coalesce(CAST(@events AS text), events),
       description = coalesce(CAST(@description AS text), description),
       enabled = CASE WHEN CAST(@enabled AS integer) IS NULL THEN enabled ELSE CAST(@enabled AS integer) END,
       disabled_reason = CASE WHEN CAST(@enabled AS integer) IS NULL AND enabled = 0 THEN disabled_reason ELSE NULL END,
       consecutive_failures = CASE WHEN CAST(@enabled AS integer) = 1 AND enabled = 0 THEN 0 ELSE consecutive_failures END,
       failing_since = CASE WHEN CAST(@enabled AS integer) = 1 AND enabled = 0 THEN NULL ELSE failing_since END,
       updated_at = @now
     WHERE id = @id AND deleted_at IS NULL
     RETURNING ${webhookEndpoints.select()}`,
  ),
  // One statement: the right-hand side reads the row before this update, so the old secret moves over.
  rollSecret: sql(
    `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext,
       previous_secret_expires_at = @previousExpiresAt, secret_ciphertext = @secretCiphertext, updated_at = @now
     WHERE id = @id AND deleted_at IS NULL`,
  ),
  softDelete: sql(
    'UPDATE webhook_endpoints SET deleted_at = @now, updated_at = @now, enabled = 0 WHERE id = @id AND deleted_at IS NULL',
  ),
  recordSuccess: sql(
    `UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL
     WHERE id = @id AND consecutive_failures <> 0`,
  ),
  recordFailure: sql(
    `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1,
       failing_since = coalesce(failing_since, @now)
     WHERE id = @id`,
  ),
  disable: sql(
    `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = @reason, updated_at = @now
     WHERE id = @id AND enabled = 1`,
  ),
  oldestSecret: sql<{ sealed: string }>(
    'SELECT secret_ciphertext AS sealed FROM webhook_endpoints ORDER BY seq LIMIT 1',
  ),
};

/**
 * `WebhookEndpointRepository` on either store.
 *
 * @example
 * const endpoint = await endpoints.insert({ id: 'we_1', businessId, environment: 'test', url: 'https://shop.example/hooks',
 *   events: ['session.successful'], description: null, secretCiphertext, createdAt: now });
 * await endpoints.disable(endpoint.id, 'failing', now); // true once
 */
export class SqlWebhookEndpointRepository implements WebhookEndpointRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(endpoint: NewWebhookEndpoint): Promise<WebhookEndpointRecord> {
    const row = await this.db.get(
      statements.insert,
      webhookEndpoints.encode({
        ...endpoint,
        events: [...endpoint.events],
        enabled: true,
        disabledReason: null,
        previousSecretCiphertext: null,
        previousSecretExpiresAt: null,
        consecutiveFailures: 0,
        failingSince: null,
        updatedAt: endpoint.createdAt,
        deletedAt: null,
      }),
    );
    if (!row) throw new Error('webhook endpoint vanished after insert');
    return webhookEndpoints.decode(row);
  }

  async find(id: string): Promise<WebhookEndpointRecord | undefined> {
    return webhookEndpoints.decode(await this.db.get(statements.find, { id }));
  }

  async list(
    businessId: string,
    environment: Environment,
    beforeSeq: number,
    limit: number,
    url?: string,
  ): Promise<WebhookEndpointRecord[]> {
    const rows = await this.db.all(statements.list, {
      businessId,
      environment,
      beforeSeq,
      limit,
      url: url ?? null,
    });
    return rows.map((row) => webhookEndpoints.decode(row));
  }

  async count(businessId: string, environment: Environment): Promise<number> {
    return (await this.db.get(statements.count, { businessId, environment }))?.n ?? 0;
  }

  async update(
    current: WebhookEndpointRecord,
    change: WebhookEndpointChange,
    now: number,
  ): Promise<WebhookEndpointRecord> {
    const row = await this.db.get(statements.update, {
      id: current.id,
      url: change.url ?? null,
      events: change.events === undefined ? null : JSON.stringify(change.events),
      description: change.description ?? null,
      enabled: change.enabled === undefined ? null : change.enabled ? 1 : 0,
      now,
    });
    if (!row) throw new Error('webhook endpoint vanished after update');
    return webhookEndpoints.decode(row);
  }

  async rollSecret(
    id: string,
    secretCiphertext: string,
    previousExpiresAt: number,
    now: number,
  ): Promise<void> {
    await this.db.run(statements.rollSecret, { id, secretCiphertext, previousExpiresAt, now });
  }

  async softDelete(id: string, now: number): Promise<boolean> {
    return (await this.db.run(statements.softDelete, { id, now })) === 1;
  }

  async recordSuccess(id: string): Promise<void> {
    await this.db.run(statements.recordSuccess, { id });
  }

  async recordFailure(id: string, now: number): Promise<void> {
    await this.db.run(statements.recordFailure, { id, now });
  }

  async disable(id: string, reason: string, now: number): Promise<boolean> {
    return (await this.db.run(statements.disable, { id, reason, now })) === 1;
  }

  async oldestSecret(): Promise<string | undefined> {
    return (await this.db.get(statements.oldestSecret))?.sealed;
  }
}
