import { performance } from 'node:perf_hooks';
import type { Store } from '../db/store.ts';
import type { DueDelivery } from '../db/webhook-deliveries.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import { deliveryAttempted } from '../metrics/metrics.ts';
import { type AttemptRecordDeps, recordAttempt } from './attempt-outcomes.ts';
import { DeliverySigner } from './delivery-signer.ts';
import type { RetrySchedule } from './retry-schedule.ts';
import { type AttemptOutcome, describeError, failed, WebhookTransport } from './webhook-transport.ts';

export interface WebhookWorkerOptions {
  store: Store;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  schedule: RetrySchedule;
  /** Attempts in flight at once, across all endpoints. */
  concurrency?: number;
  random?: () => number;
  /**
   * Whether what the receiver at this address answered may be kept and shown back in the deliveries API.
   * Public unicast addresses only, by default: a test key's endpoint may point at loopback, and showing what
   * answered there would let any test key read any loopback port of the service's machine. Tests
   * that need an excerpt from their loopback receiver say so with this option.
   */
  revealsAnswerOf?: (address: string) => boolean;
}

/**
 * The webhook delivery worker: the scheduling side of delivery. The pending rows of `webhook_deliveries` are its
 * queue: it picks the due ones (oldest due first, at most `concurrency` in flight), has each signed
 * (`DeliverySigner`) and posted (`WebhookTransport`), and records the attempt together with what follows from it
 * (succeeded, retry at, failed, endpoint disabled) in one write (`recordAttempt`). Nothing is kept only in memory, so after a crash every delivery still pending (including one
 * that was in flight) is simply attempted again: delivery is at least once, and receivers de-duplicate on the
 * event id (`X-Service-Event-Id`, also `id` in the body).
 *
 * It wakes when the outbox queues deliveries (after the commit), when an attempt finishes, and on one timer
 * set for the next due retry: it never polls.
 *
 * @example
 * const worker = new WebhookWorker({ store, secretBox, clock, logger, schedule: RETRY_SCHEDULES.fast });
 * worker.start();
 * await worker.runDue(); // in tests: attempt everything due now and wait for the outcomes
 */
export class WebhookWorker {
  private running = false;
  private tickScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly inFlight = new Map<string, { promise: Promise<void>; controller: AbortController }>();
  private picking: Promise<void> | undefined;
  private readonly concurrency: number;
  private readonly signer: DeliverySigner;
  private readonly recording: AttemptRecordDeps;
  private readonly transport: WebhookTransport;

  constructor(private readonly options: WebhookWorkerOptions) {
    const { leaseMs, timeoutMs } = options.schedule;
    if (leaseMs !== undefined && leaseMs <= timeoutMs) {
      throw new Error(
        `the webhook lease (${leaseMs} ms) must be longer than an attempt's timeout (${timeoutMs} ms)`,
      );
    }
    this.concurrency = options.concurrency ?? 64;
    this.signer = new DeliverySigner(options.secretBox);
    const { store, schedule, clock, logger } = options;
    this.recording = { store, schedule, clock, logger, random: options.random ?? Math.random };
    this.transport = new WebhookTransport({
      maxSockets: this.concurrency,
      timeoutMs,
      ...(options.revealsAnswerOf ? { revealsAnswerOf: options.revealsAnswerOf } : {}),
    });
  }

  start(): void {
    this.running = true;
    this.nudge();
  }

  /** Stops picking work, aborts attempts in flight (they stay pending and are retried) and waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const { controller } of this.inFlight.values()) controller.abort();
    await Promise.allSettled([...this.inFlight.values()].map((entry) => entry.promise));
    this.transport.close();
  }

  /** Something may be due (deliveries queued, an endpoint re-enabled): look soon, once. */
  nudge(): void {
    if (!this.running || this.tickScheduled) return;
    this.tickScheduled = true;
    setImmediate(() => void this.tick());
  }

  /** How many attempts are in flight (tests, metrics). */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Starts every attempt due now (up to the concurrency) and waits until all attempts in flight finished. */
  async runDue(): Promise<void> {
    await this.startDue();
    await Promise.allSettled([...this.inFlight.values()].map((entry) => entry.promise));
  }

  private async tick(): Promise<void> {
    this.tickScheduled = false;
    if (!this.running) return;
    try {
      await this.startDue();
      if (this.inFlight.size < this.concurrency) await this.armTimer();
    } catch (error) {
      // The store could not be read (the database is unreachable): the timer set before, or a later nudge,
      // looks again.
      this.options.logger.error('webhook worker could not read due deliveries', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /**
   * One pick at a time, and never more rows than it will start: on PostgreSQL `due` claims (leases) what it
   * returns, so a row picked and not started would wait for its lease to end.
   */
  private startDue(): Promise<void> {
    this.picking ??= this.pickDue().finally(() => {
      this.picking = undefined;
    });
    return this.picking;
  }

  private async pickDue(): Promise<void> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const due = await this.options.store.webhookDeliveries.due(this.options.clock.now(), free, [
      ...this.inFlight.keys(),
    ]);
    for (const delivery of due) {
      if (this.inFlight.has(delivery.id)) continue;
      const controller = new AbortController();
      const promise = this.attempt(delivery, controller.signal)
        .catch((error: unknown) => {
          this.options.logger.error('webhook attempt could not be recorded', {
            deliveryId: delivery.id,
            error: error instanceof Error ? error.message : String(error),
          });
        })
        .finally(() => {
          this.inFlight.delete(delivery.id);
          this.nudge();
        });
      this.inFlight.set(delivery.id, { promise, controller });
    }
  }

  /** One timer, set for the earliest pending retry; nudges cover everything sooner. */
  private async armTimer(): Promise<void> {
    const next = await this.options.store.webhookDeliveries.nextDueAt();
    const now = this.options.clock.now();
    // Look again at least every `recheckMs`, even with nothing pending: deliveries another instance queued and
    // could not send (it died), a moved clock or a long sleep never strand a delivery.
    const at = Math.min(next ?? Number.POSITIVE_INFINITY, now + (this.options.schedule.recheckMs ?? 5_000));
    if (this.timer && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.nudge();
      },
      Math.max(0, at - now),
    );
    this.timer.unref();
  }

  /** One attempt of one delivery: signed, posted (`WebhookTransport`), and its outcome recorded. */
  private async attempt(delivery: DueDelivery, signal: AbortSignal): Promise<void> {
    const attemptedAt = this.options.clock.now();
    const started = performance.now();
    let outcome: AttemptOutcome;
    try {
      const { body, signature } = this.signer.sign(delivery, attemptedAt);
      outcome = await this.transport.post(delivery, body, signature, signal);
    } catch (error) {
      outcome = failed(describeError(error));
    }
    if (signal.aborted && !this.running) return; // shutting down: the delivery stays pending, retried later
    const latencyMs = Math.round(performance.now() - started);
    deliveryAttempted(outcome.statusCode, (performance.now() - started) / 1000);
    await recordAttempt(this.recording, delivery, { attemptedAt, latencyMs, outcome });
  }
}
