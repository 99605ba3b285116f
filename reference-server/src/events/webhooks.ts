import type {
  CreateWebhookEndpointParams,
  FieldError,
  UpdateWebhookEndpointParams,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEventType,
} from '@servicepay/node/protocol';
import { WebhookEventTypeSchema } from '@servicepay/node/protocol';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { AuditAction } from '../db/audit-log.ts';
import type { Repositories } from '../db/repositories.ts';
import type { Store } from '../db/store.ts';
import type { WebhookAttemptRecord } from '../db/webhook-attempts.ts';
import type { WebhookDeliveryRecord } from '../db/webhook-deliveries.ts';
import type { WebhookEndpointRecord } from '../db/webhook-endpoints.ts';
import { DomainError, notFound } from '../domain-errors.ts';
import { type Clock, toIso, toIsoOrNull } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { newId, randomBase62 } from '../internal/random.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import type { WebhookOutbox } from './outbox.ts';
import { WEBHOOK_EVENT_TYPES } from './outbox.ts';
import { RETRY_SCHEDULES, type RetrySchedule } from './retry-schedule.ts';
import { checkWebhookUrl, type Resolver } from './webhook-url-policy.ts';
import { WebhookWorker } from './webhook-worker.ts';

/** Endpoints one business may register per environment. */
export const MAX_ENDPOINTS_PER_ENVIRONMENT = 16;
/** How long the previous secret keeps signing after a roll. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

export interface WebhooksOptions {
  store: Store;
  outbox: WebhookOutbox;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  schedule: 'standard' | 'fast' | RetrySchedule;
  /** DNS for the registration-time address check: `dnsResolver(config)`, or a test's own. */
  resolver: Resolver;
  concurrency?: number;
}

const ALL_TYPES = WebhookEventTypeSchema.options;

/** An endpoint as the API shows it: never its secret. */
export function toEndpointView(endpoint: WebhookEndpointRecord): WebhookEndpoint {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabledReason: endpoint.disabledReason,
    environment: endpoint.environment,
    createdAt: toIso(endpoint.createdAt),
    updatedAt: toIso(endpoint.updatedAt),
  };
}

const newSecret = () => `whsec_${randomBase62(32)}`;

/**
 * The merchant-facing side of webhooks: endpoints (create, list, retrieve, update, delete, roll the secret),
 * their deliveries, and resending an event; plus the delivery worker, which the service runs as a task.
 *
 * @example
 * const resolver = dnsResolver({ servers: null, deadlineMs: 2000 });
 * const webhooks = new Webhooks({ store, outbox, secretBox, clock, logger, schedule: 'fast', resolver });
 * const endpoint = await webhooks.create(caller, { url: 'http://127.0.0.1:9000/hooks' });
 * console.log(endpoint.secret); // whsec_…, shown this once
 */
export class Webhooks {
  readonly worker: WebhookWorker;
  private readonly resolver: Resolver;

  constructor(private readonly options: WebhooksOptions) {
    this.resolver = options.resolver;
    this.worker = new WebhookWorker({
      store: options.store,
      secretBox: options.secretBox,
      clock: options.clock,
      logger: options.logger,
      schedule: typeof options.schedule === 'string' ? RETRY_SCHEDULES[options.schedule] : options.schedule,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    });
    options.outbox.onEnqueued(() => this.worker.nudge());
  }

  async create(caller: ApiCaller, params: CreateWebhookEndpointParams): Promise<WebhookEndpointWithSecret> {
    await this.checkUrl(params.url, caller);
    const secret = newSecret();
    const sealed = this.options.secretBox.seal(secret);
    const endpoint = await this.options.store.writes.run(async (tx) => {
      if (
        (await tx.webhookEndpoints.count(caller.business.id, caller.environment)) >=
        MAX_ENDPOINTS_PER_ENVIRONMENT
      ) {
        throw new DomainError(
          'webhook_endpoint_limit_reached',
          `A business can register at most ${MAX_ENDPOINTS_PER_ENVIRONMENT} endpoints per environment: delete one, or update an existing endpoint to this URL.`,
          [
            {
              path: 'url',
              message: `the ${caller.environment} limit of ${MAX_ENDPOINTS_PER_ENVIRONMENT} endpoints is reached`,
            },
          ],
        );
      }
      const created = await tx.webhookEndpoints.insert({
        id: newId('we'),
        businessId: caller.business.id,
        environment: caller.environment,
        url: params.url,
        events: uniqueTypes(params.events ?? ALL_TYPES),
        description: params.description ?? null,
        secretCiphertext: sealed,
        createdAt: this.options.clock.now(),
      });
      await this.audit(tx, caller, 'webhook_endpoint.created', created.id, { url: created.url });
      return created;
    });
    return { ...toEndpointView(endpoint), secret };
  }

  /** Newest first; `url` keeps only the endpoints registered at exactly that URL (find-or-create by URL). */
  async list(
    caller: ApiCaller,
    query: { limit: number; startingAfter?: string | undefined; url?: string | undefined },
  ) {
    let beforeSeq = Number.MAX_SAFE_INTEGER;
    if (query.startingAfter !== undefined) {
      const cursor = await this.options.store.webhookEndpoints.find(query.startingAfter);
      if (!cursor || cursor.businessId !== caller.business.id || cursor.environment !== caller.environment) {
        throw unknownCursor('an endpoint of this list');
      }
      beforeSeq = cursor.seq;
    }
    const rows = await this.options.store.webhookEndpoints.list(
      caller.business.id,
      caller.environment,
      beforeSeq,
      query.limit + 1,
      query.url,
    );
    return toPage(rows, query.limit, toEndpointView);
  }

  async retrieve(caller: ApiCaller, id: string): Promise<WebhookEndpoint> {
    return toEndpointView(await this.owned(caller, id));
  }

  async update(caller: ApiCaller, id: string, params: UpdateWebhookEndpointParams): Promise<WebhookEndpoint> {
    await this.owned(caller, id);
    if (params.url !== undefined) await this.checkUrl(params.url, caller);
    const updated = await this.options.store.writes.run(async (tx) => {
      const current = await this.owned(caller, id, tx);
      const now = this.options.clock.now();
      const next = await tx.webhookEndpoints.update(
        current,
        {
          ...(params.url === undefined ? {} : { url: params.url }),
          ...(params.events === undefined ? {} : { events: uniqueTypes(params.events) }),
          ...(params.description === undefined ? {} : { description: params.description }),
          ...(params.enabled === undefined ? {} : { enabled: params.enabled }),
        },
        now,
      );
      if (current.enabled && !next.enabled) await tx.webhookDeliveries.parkForEndpoint(id, now);
      if (!current.enabled && next.enabled) await tx.webhookDeliveries.unparkForEndpoint(id, now);
      await this.audit(tx, caller, 'webhook_endpoint.updated', id, {
        changed: Object.keys(params),
        ...(params.url === undefined || params.url === current.url
          ? {}
          : { from: current.url, to: next.url }),
      });
      return next;
    });
    if (updated.enabled) this.worker.nudge();
    return toEndpointView(updated);
  }

  /** Deletes the endpoint; its pending deliveries are marked failed (nothing more is sent to it). */
  async remove(caller: ApiCaller, id: string): Promise<{ id: string; deleted: true }> {
    await this.owned(caller, id);
    await this.options.store.writes.run(async (tx) => {
      await this.owned(caller, id, tx);
      const now = this.options.clock.now();
      await tx.webhookEndpoints.softDelete(id, now);
      await tx.webhookDeliveries.failPendingForEndpoint(id, now);
      await this.audit(tx, caller, 'webhook_endpoint.deleted', id, {});
    });
    return { id, deleted: true };
  }

  /** A new secret, returned once; the previous one keeps signing beside it for 24 hours. */
  async rollSecret(caller: ApiCaller, id: string): Promise<WebhookEndpointWithSecret> {
    await this.owned(caller, id);
    const secret = newSecret();
    const sealed = this.options.secretBox.seal(secret);
    const endpoint = await this.options.store.writes.run(async (tx) => {
      await this.owned(caller, id, tx);
      const now = this.options.clock.now();
      await tx.webhookEndpoints.rollSecret(id, sealed, now + PREVIOUS_SECRET_GRACE_MS, now);
      await this.audit(tx, caller, 'webhook_endpoint.secret_rolled', id, {});
      const stored = await tx.webhookEndpoints.find(id);
      if (!stored) throw notFound('webhook endpoint');
      return stored;
    });
    return { ...toEndpointView(endpoint), secret };
  }

  async listDeliveries(
    caller: ApiCaller,
    endpointId: string,
    query: {
      limit: number;
      startingAfter?: string | undefined;
      eventId?: string | undefined;
      status?: WebhookDeliveryStatus | undefined;
    },
  ) {
    await this.owned(caller, endpointId);
    const { webhookDeliveries } = this.options.store;
    let beforeSeq: number | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await webhookDeliveries.find(query.startingAfter);
      if (!cursor || cursor.endpointId !== endpointId) throw unknownCursor('a delivery of this list');
      beforeSeq = cursor.seq;
    }
    const rows = await webhookDeliveries.list({
      endpointId,
      eventId: query.eventId,
      status: query.status,
      beforeSeq,
      limit: query.limit + 1,
    });
    const attempts = await webhookDeliveries.attemptsOf(
      rows.slice(0, query.limit).map((delivery) => delivery.id),
    );
    return toPage(rows, query.limit, (delivery) => toDeliveryView(delivery, attempts.get(delivery.id) ?? []));
  }

  /**
   * Queues the event again: to one endpoint (which must be enabled), or to every enabled endpoint that
   * subscribes to its type. Each resend is a new delivery with its own attempts; the event id is the same.
   */
  async resend(
    caller: ApiCaller,
    eventId: string,
    endpointId: string | undefined,
  ): Promise<{ eventId: string; deliveries: string[] }> {
    const ids = await this.options.store.writes.run(async (tx) => {
      const event = await tx.events.find(eventId);
      if (!event) throw notFound('event');
      assertOwnedBy(caller, event, 'event');
      if (!WEBHOOK_EVENT_TYPES.has(event.type)) {
        throw new DomainError('validation_failed', `${event.type} events are not sent by webhook.`, [
          { path: 'id', message: 'not a webhook event' },
        ]);
      }
      let targets: WebhookEndpointRecord[];
      if (endpointId !== undefined) {
        const endpoint = await this.owned(caller, endpointId, tx);
        if (!endpoint.enabled) {
          throw new DomainError('validation_failed', 'The endpoint is disabled; enable it first.', [
            { path: 'endpointId', message: 'endpoint is disabled' },
          ]);
        }
        targets = [endpoint];
      } else {
        targets = (await this.allEndpoints(tx, caller)).filter(
          (endpoint) => endpoint.enabled && endpoint.events.includes(event.type as WebhookEventType),
        );
      }
      const now = this.options.clock.now();
      const queued: string[] = [];
      for (const endpoint of targets) {
        const id = newId('wd');
        await tx.webhookDeliveries.insert(id, endpoint.id, event.id, now);
        queued.push(id);
      }
      return queued;
    });
    if (ids.length > 0) this.worker.nudge();
    return { eventId, deliveries: ids };
  }

  /** An audit entry for a change to an endpoint, in the change's own transaction. Never the secret. */
  private audit(
    tx: Repositories,
    caller: ApiCaller,
    action: AuditAction,
    endpointId: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    return tx.auditLog.record({
      at: this.options.clock.now(),
      actor: caller.actor ?? `secret_key:${caller.environment}`,
      action,
      businessId: caller.business.id,
      environment: caller.environment,
      target: endpointId,
      details,
    });
  }

  private allEndpoints(tx: Repositories, caller: ApiCaller): Promise<WebhookEndpointRecord[]> {
    return tx.webhookEndpoints.list(
      caller.business.id,
      caller.environment,
      Number.MAX_SAFE_INTEGER,
      MAX_ENDPOINTS_PER_ENVIRONMENT * 4,
    );
  }

  /**
   * The endpoint (with its sealed secrets) if it is the caller's: 404 if none, 403 if another business's or
   * another environment's. `repositories`: a write job's, inside one.
   */
  async owned(
    caller: ApiCaller,
    id: string,
    repositories: Repositories = this.options.store,
  ): Promise<WebhookEndpointRecord> {
    const endpoint = await repositories.webhookEndpoints.find(id);
    if (!endpoint) throw notFound('webhook endpoint');
    assertOwnedBy(caller, endpoint, 'webhook endpoint');
    return endpoint;
  }

  /**
   * The endpoint's signing secret, opened, for the portal's **Reveal** (the business's own endpoint only: 404,
   * 403 as `owned`). Nothing is written; the portal logs that it was shown.
   */
  async revealSecret(caller: ApiCaller, id: string): Promise<string> {
    const endpoint = await this.owned(caller, id);
    return this.options.secretBox.open(endpoint.secretCiphertext);
  }

  private async checkUrl(url: string, caller: ApiCaller): Promise<void> {
    const checked = await checkWebhookUrl(url, caller.environment, this.resolver);
    if (!checked.ok) {
      const fieldErrors: FieldError[] = [{ path: 'url', message: checked.message }];
      throw new DomainError(
        'validation_failed',
        `The webhook URL is not allowed: ${checked.message}.`,
        fieldErrors,
      );
    }
  }
}

/** A delivery and its attempts as the API shows them (`WebhookDelivery`). */
export function toDeliveryView(
  delivery: WebhookDeliveryRecord,
  attempts: ReadonlyArray<Omit<WebhookAttemptRecord, 'deliveryId'>>,
): WebhookDelivery {
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType as WebhookEventType,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: toIsoOrNull(delivery.nextAttemptAt),
    attempts: attempts.map((attempt) => ({
      at: toIso(attempt.attemptedAt),
      statusCode: attempt.statusCode,
      latencyMs: attempt.latencyMs,
      error: attempt.error,
      responseExcerpt: attempt.responseExcerpt,
      responseExcerptWithheld: attempt.responseExcerptWithheld,
    })),
    createdAt: toIso(delivery.createdAt),
  };
}

const uniqueTypes = (types: readonly WebhookEventType[]): WebhookEventType[] => [...new Set(types)];
