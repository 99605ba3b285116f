import { WebhookEventTypeSchema } from '@servicepay/node/protocol';
import type { NewEvent } from '../db/events.ts';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import { newId } from '../internal/random.ts';

/**
 * Event types merchants can receive by webhook: the contract's list, never a copy of it. Other transitions
 * (`session.awaiting_payment`, `session.pending`) are pushed to the widget only.
 */
export const WEBHOOK_EVENT_TYPES: ReadonlySet<string> = new Set(WebhookEventTypeSchema.options);

/**
 * Writes one pending delivery per enabled endpoint of the event's business and environment that subscribes
 * to its type. Called inside the transition's write job: the event and its deliveries commit together, so
 * no event is ever lost between the status change and the webhook.
 *
 * @example
 * const queued = await outbox.enqueue(tx, context, event); // inside store.writes.run
 */
export class WebhookOutbox {
  private listener: (() => void) | undefined;

  /**
   * Tells `listener` (the delivery worker) whenever deliveries were queued, once the write job committed:
   * before that, another connection (the worker's reads on PostgreSQL) cannot see them.
   */
  onEnqueued(listener: () => void): void {
    this.listener = listener;
  }

  /**
   * Returns how many deliveries were queued. Takes the event as inserted or about to be (its id is known
   * before its insert): sent behind the event's insert in one round trip, the deliveries still follow it.
   */
  async enqueue(tx: Repositories, context: WriteContext, event: NewEvent): Promise<number> {
    if (!WEBHOOK_EVENT_TYPES.has(event.type)) return 0;
    const queued = await tx.webhookDeliveries.enqueueForEvent(newId('wd'), {
      eventId: event.id,
      businessId: event.businessId,
      environment: event.environment,
      type: event.type,
      now: event.createdAt,
    });
    const listener = this.listener;
    if (queued > 0 && listener) context.afterCommit(listener);
    return queued;
  }
}
