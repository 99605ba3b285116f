import type { Store } from '../db/store.ts';
import type { DueDelivery } from '../db/webhook-deliveries.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { jittered, type RetrySchedule } from './retry-schedule.ts';
import type { AttemptOutcome } from './webhook-transport.ts';

/** What recording an attempt needs: the store it writes, the schedule it applies, and its clock and dice. */
export interface AttemptRecordDeps {
  store: Store;
  schedule: RetrySchedule;
  clock: Clock;
  logger: Logger;
  random: () => number;
}

/**
 * Records one attempt and everything that follows from it, in one write: the endpoint's health, the attempt's
 * row, and the delivery succeeded, due again after its backoff, or failed for good, and the endpoint disabled
 * once it kept failing (`disableAfterAttempts` over `disablePeriodMs`). Then logs what the business is told.
 *
 * @example
 * await recordAttempt(deps, delivery, { attemptedAt, latencyMs, outcome });
 */
export async function recordAttempt(
  deps: AttemptRecordDeps,
  delivery: DueDelivery,
  { attemptedAt, latencyMs, outcome }: { attemptedAt: number; latencyMs: number; outcome: AttemptOutcome },
): Promise<void> {
  const { store, schedule, clock, logger, random } = deps;
  const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const attemptNumber = delivery.attemptCount + 1;
  const { disabled, stale } = await store.writes.run(
    async ({ webhookDeliveries: deliveries, webhookEndpoints: endpoints }) => {
      const now = clock.now();
      // The endpoint's row before the delivery's: the order a disable takes them in, so that on PostgreSQL two
      // instances' jobs never wait on each other in a cycle (a deadlock would only be retried, but costs).
      if (ok) await endpoints.recordSuccess(delivery.endpointId);
      else await endpoints.recordFailure(delivery.endpointId, attemptedAt);
      await deliveries.recordAttempt({
        deliveryId: delivery.id,
        attemptedAt,
        statusCode: outcome.statusCode,
        latencyMs,
        error: outcome.error === null ? null : outcome.error.slice(0, 300),
        responseExcerpt: outcome.responseExcerpt,
        responseExcerptWithheld: outcome.responseExcerptWithheld,
      });
      // A success applies whoever holds the delivery now: it must never be lost. A failure applies only under
      // this attempt's own claim: an attempt that outlived its lease while another instance claimed the
      // delivery again must not move that attempt's schedule or count (its attempt row above still shows it).
      if (ok) {
        await deliveries.markSucceeded(delivery.id, now);
        return { disabled: false as const, stale: undefined };
      }
      const delay = schedule.delaysMs[attemptNumber - 1];
      const applied =
        delay === undefined
          ? await deliveries.markFailed(delivery.id, now, delivery)
          : await deliveries.retryAt(
              delivery.id,
              now + jittered(delay, schedule.jitter, random),
              now,
              delivery,
            );
      const current = applied ? undefined : await deliveries.find(delivery.id);
      const stale = current?.status === 'pending' ? current : undefined;
      // The endpoint's health counts every attempt it failed, this one too.
      const endpoint = await endpoints.find(delivery.endpointId);
      if (
        endpoint?.enabled &&
        endpoint.failingSince !== null &&
        endpoint.consecutiveFailures >= schedule.disableAfterAttempts &&
        now - endpoint.failingSince >= schedule.disablePeriodMs &&
        (await endpoints.disable(endpoint.id, 'failing', now))
      ) {
        await deliveries.parkForEndpoint(endpoint.id, now);
        return {
          disabled: {
            businessId: endpoint.businessId,
            environment: endpoint.environment,
            failures: endpoint.consecutiveFailures,
          },
          stale,
        };
      }
      return { disabled: false as const, stale };
    },
  );
  if (stale) {
    // Usually an attempt that outlived its lease while another instance claimed the delivery again; also one
    // whose endpoint was disabled and enabled again meanwhile (the delivery was released, due at once).
    logger.info('webhook attempt no longer held the delivery: its failure is not applied to it', {
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      attempt: attemptNumber,
      statusCode: outcome.statusCode,
      claimedUntil: delivery.claimedUntil,
      // The delivery as whatever took it over left it.
      attemptCount: stale.attemptCount,
      nextAttemptAt: stale.nextAttemptAt,
    });
  }
  if (disabled) {
    // How the business is told: this line, and the endpoint itself (enabled: false, disabledReason: "failing").
    logger.warn('webhook endpoint disabled: it kept failing', {
      endpointId: delivery.endpointId,
      businessId: disabled.businessId,
      environment: disabled.environment,
      consecutiveFailures: disabled.failures,
      disabledReason: 'failing',
    });
  }
}
