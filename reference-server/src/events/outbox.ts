import { WebhookEventTypeSchema } from '@servicepay/node/protocol';
import type { SqliteDatabase } from '../db/database.ts';
import type { EventRecord } from '../db/events.ts';
import { WebhookDeliveryRepository } from '../db/webhook-deliveries.ts';
import { newId } from '../internal/random.ts';

/**
 * Event types merchants can receive by webhook: the contract's list, never a copy of it. Other transitions
 * (`session.awaiting_payment`, `session.pending`) are pushed to the widget only.
 */
export const WEBHOOK_EVENT_TYPES: ReadonlySet<string> = new Set(WebhookEventTypeSchema.options);

/**
 * Writes one pending delivery per enabled endpoint of the event's business and environment that subscribes
 * to its type. Called inside the transition's transaction: the event and its deliveries commit together, so
 * no event is ever lost between the status change and the webhook.
 */
export class WebhookOutbox {
  private readonly deliveries: WebhookDeliveryRepository;
  private listener: (() => void) | undefined;

  constructor(db: SqliteDatabase) {
    this.deliveries = new WebhookDeliveryRepository(db);
  }

  /**
   * Tells `listener` (the delivery worker) whenever deliveries were queued. It is called inside the
   * transaction, so it must only schedule work for a later turn of the event loop: by then the write queue's
   * synchronous batch has committed (or rolled back, and the worker simply finds nothing).
   */
  onEnqueued(listener: () => void): void {
    this.listener = listener;
  }

  /** Returns how many deliveries were queued. */
  enqueue(event: EventRecord): number {
    if (!WEBHOOK_EVENT_TYPES.has(event.type)) return 0;
    const queued = this.deliveries.enqueueForEvent(newId('wd'), {
      eventId: event.id,
      businessId: event.businessId,
      environment: event.environment,
      type: event.type,
      now: event.createdAt,
    });
    if (queued > 0) this.listener?.();
    return queued;
  }
}
