import type { Pagination, WebhookDelivery, WebhookEndpoint } from '@servicepay/node/protocol';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { EventRecord } from '../db/events.ts';
import type { Store } from '../db/store.ts';
import { notFound } from '../domain-errors.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { WEBHOOK_EVENT_TYPES } from './outbox.ts';
import { webhookBody } from './webhook-worker.ts';
import { toDeliveryView, toEndpointView } from './webhooks.ts';

/** How many deliveries of one event its page shows (each resend is one more): far more than any event gets. */
export const EVENT_DELIVERIES_SHOWN = 100;

/** One event as its page shows it: the record, the body an endpoint receives, and every delivery of it. */
export interface EventDetail {
  event: EventRecord;
  /** Whether the event is sent by webhook at all (`session.awaiting_payment` and `session.pending` are not). */
  sentByWebhook: boolean;
  /** The webhook body, byte for byte as signed and posted (`webhookBody`); undefined if not sent by webhook. */
  body: string | undefined;
  /** Newest first, each with its attempts and its endpoint (undefined once the endpoint was deleted). */
  deliveries: Array<{ delivery: WebhookDelivery; endpoint: WebhookEndpoint | undefined }>;
}

/**
 * What happened in a business's environment: its events, newest first, and each event's deliveries with their
 * attempts, read for the portal's Events page. Scoped like every service: another business's event answers
 * 403 `forbidden`, another environment's 403 `environment_mismatch`, an unknown one 404.
 *
 * @example
 * const history = new EventHistory(store);
 * const page = await history.list(caller, { limit: 20, type: 'session.successful' });
 */
export class EventHistory {
  constructor(private readonly store: Store) {}

  /** A page of the caller's events, newest first, of one type if given; `startingAfter` is an event id. */
  async list(
    caller: ApiCaller,
    query: { limit: number; type?: string | undefined; startingAfter?: string | undefined },
  ): Promise<{ data: EventRecord[]; pagination: Pagination }> {
    let beforeSeq: number | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await this.store.events.find(query.startingAfter);
      if (!cursor || cursor.businessId !== caller.business.id || cursor.environment !== caller.environment) {
        throw unknownCursor('an event of this list');
      }
      beforeSeq = cursor.seq;
    }
    const rows = await this.store.events.list({
      businessId: caller.business.id,
      environment: caller.environment,
      type: query.type,
      beforeSeq,
      limit: query.limit + 1,
    });
    return toPage(rows, query.limit, (event) => event);
  }

  /** One event of the caller's, its webhook body and every delivery of it with its attempts. */
  async detail(caller: ApiCaller, id: string): Promise<EventDetail> {
    const event = await this.store.events.find(id);
    if (!event) throw notFound('event');
    assertOwnedBy(caller, event, 'event');
    const sentByWebhook = WEBHOOK_EVENT_TYPES.has(event.type);
    const records = await this.store.webhookDeliveries.forEvent(event.id, EVENT_DELIVERIES_SHOWN);
    const attempts = await this.store.webhookDeliveries.attemptsOf(records.map((record) => record.id));
    const endpoints = new Map<string, WebhookEndpoint | undefined>();
    for (const endpointId of new Set(records.map((record) => record.endpointId))) {
      const endpoint = await this.store.webhookEndpoints.find(endpointId);
      endpoints.set(endpointId, endpoint && toEndpointView(endpoint));
    }
    return {
      event,
      sentByWebhook,
      body: sentByWebhook
        ? webhookBody({
            eventId: event.id,
            eventType: event.type,
            environment: event.environment,
            eventCreatedAt: event.createdAt,
            payload: event.payload,
            credit: event.credit,
          })
        : undefined,
      deliveries: records.map((record) => ({
        delivery: toDeliveryView(record, attempts.get(record.id) ?? []),
        endpoint: endpoints.get(record.endpointId),
      })),
    };
  }
}
