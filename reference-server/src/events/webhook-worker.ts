import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Environment } from '@servicepay/node/protocol';
import type { Store } from '../db/store.ts';
import type { DueDelivery } from '../db/webhook-deliveries.ts';
import { BoundedMap } from '../internal/bounded-map.ts';
import { type Clock, toIso } from '../internal/clock.ts';
import { type Logger, redact } from '../internal/logger.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import { signPayload } from '../internal/signature.ts';
import { deliveryAttempted } from '../metrics/metrics.ts';
import { checkUrlStatically, classifyAddress, guardedLookup, hostOf } from './webhook-url-policy.ts';

/** How a delivery is retried, how long one attempt may take, and when a failing endpoint is turned off. */
export interface RetrySchedule {
  /** Delay before retry n (n = 1…); a delivery makes `delaysMs.length + 1` attempts in all. */
  delaysMs: readonly number[];
  /** Each delay is multiplied by a random factor in [1 - jitter, 1 + jitter], so retries do not stampede. */
  jitter: number;
  /** One attempt, connection to last byte. */
  timeoutMs: number;
  /** An endpoint is disabled after this many failed attempts in a row spanning at least `disablePeriodMs`. */
  disableAfterAttempts: number;
  disablePeriodMs: number;
  /**
   * When nothing is due, how long the worker waits before it looks again (default 5 s). Its own commits wake
   * it at once; this bounds the wait for deliveries it was not told about: another instance's (PostgreSQL) that
   * died before sending them, a moved clock.
   */
  recheckMs?: number;
  /**
   * How long a delivery one instance picked is kept from the others on PostgreSQL (default 60 s): longer than
   * an attempt (`timeoutMs`) and its recording (the worker refuses a schedule whose lease is not longer than
   * its timeout), and how long a killed instance's picks wait to be sent again. An attempt that outlives it
   * anyway (a stalled process) may find the delivery claimed again by another instance: its failure is then
   * not recorded on the delivery, its success is.
   */
  leaseMs?: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * `standard`: 12 attempts over about three days (1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 12 h, 16 h,
 * 16 h ≈ 71.6 h, ±20 %). `fast`: the same shape in seconds (about a minute in all), for development and tests.
 */
export const RETRY_SCHEDULES: Record<'standard' | 'fast', RetrySchedule> = {
  standard: {
    delaysMs: [
      MINUTE,
      5 * MINUTE,
      30 * MINUTE,
      HOUR,
      2 * HOUR,
      4 * HOUR,
      8 * HOUR,
      12 * HOUR,
      12 * HOUR,
      16 * HOUR,
      16 * HOUR,
    ],
    jitter: 0.2,
    timeoutMs: 10_000,
    disableAfterAttempts: 12,
    disablePeriodMs: 48 * HOUR,
    recheckMs: 5_000,
    leaseMs: MINUTE,
  },
  fast: {
    delaysMs: [250, 500, 1000, 2000, 4000, 8000, 15_000, 30_000],
    jitter: 0.2,
    timeoutMs: 1000,
    disableAfterAttempts: 9,
    disablePeriodMs: 5000,
    recheckMs: 500,
    leaseMs: 5000,
  },
};

/** How long a delivery is retried on `schedule` before it fails for good: its delays added up (jitter aside). */
export function retrySpanMs(schedule: RetrySchedule): number {
  return schedule.delaysMs.reduce((total, delay) => total + delay, 0);
}

/** Bytes of a receiver's answer kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** Bytes of an answer read at most before the connection is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

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

/** Why an attempt's `responseExcerpt` is null although the receiver answered. */
export type ExcerptWithheldReason = 'receiver_not_public';

type AttemptOutcome = {
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  responseExcerptWithheld: ExcerptWithheldReason | null;
};

const NO_ANSWER = { responseExcerpt: null, responseExcerptWithheld: null } as const;

const revealsPublicOnly = (address: string): boolean => classifyAddress(address) === 'public';

/**
 * The webhook delivery worker. The pending rows of `webhook_deliveries` are its queue: it picks the due ones
 * (oldest due first, at most `concurrency` in flight), signs each body with the endpoint's secret(s), posts it,
 * and records the attempt together with what follows from it (succeeded, retry at, failed, endpoint disabled)
 * in one write. Nothing is kept only in memory, so after a crash every delivery still pending (including one
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
  /** Signing secrets opened, by their sealed form: at most 1024, then it starts again. */
  private readonly secretCache = new BoundedMap<string, string>(1024);
  private readonly concurrency: number;
  private readonly random: () => number;
  private readonly revealsAnswerOf: (address: string) => boolean;
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  private readonly lookups: Record<Environment, ReturnType<typeof guardedLookup>> = {
    test: guardedLookup('test'),
    live: guardedLookup('live'),
  };

  constructor(private readonly options: WebhookWorkerOptions) {
    const { leaseMs, timeoutMs } = options.schedule;
    if (leaseMs !== undefined && leaseMs <= timeoutMs) {
      throw new Error(
        `the webhook lease (${leaseMs} ms) must be longer than an attempt's timeout (${timeoutMs} ms)`,
      );
    }
    this.concurrency = options.concurrency ?? 64;
    this.random = options.random ?? Math.random;
    this.revealsAnswerOf = options.revealsAnswerOf ?? revealsPublicOnly;
    this.httpAgent = new HttpAgent({ keepAlive: true, maxSockets: this.concurrency });
    this.httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: this.concurrency });
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
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
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

  private openSecret(ciphertext: string): string {
    let secret = this.secretCache.get(ciphertext);
    if (secret === undefined) {
      secret = this.options.secretBox.open(ciphertext);
      this.secretCache.set(ciphertext, secret);
    }
    return secret;
  }

  private async attempt(delivery: DueDelivery, signal: AbortSignal): Promise<void> {
    const { clock } = this.options;
    const attemptedAt = clock.now();
    const started = performance.now();
    let outcome: AttemptOutcome;
    try {
      const secrets = [this.openSecret(delivery.secretCiphertext)];
      if (
        delivery.previousSecretCiphertext !== null &&
        delivery.previousSecretExpiresAt !== null &&
        delivery.previousSecretExpiresAt > attemptedAt
      ) {
        secrets.push(this.openSecret(delivery.previousSecretCiphertext));
      }
      const body = webhookBody(delivery);
      const signature = signPayload(body, secrets, Math.floor(attemptedAt / 1000));
      outcome = await this.send(delivery, body, signature, signal);
    } catch (error) {
      outcome = { statusCode: null, error: describe(error), ...NO_ANSWER };
    }
    if (signal.aborted && !this.running) return; // shutting down: the delivery stays pending, retried later
    const latencyMs = Math.round(performance.now() - started);
    deliveryAttempted(outcome.statusCode, (performance.now() - started) / 1000);
    await this.record(delivery, attemptedAt, latencyMs, outcome);
  }

  private send(
    delivery: DueDelivery,
    body: string,
    signature: string,
    signal: AbortSignal,
  ): Promise<AttemptOutcome> {
    // Literal addresses never reach the lookup, so they are checked here, on every attempt.
    const checked = checkUrlStatically(delivery.url, delivery.environment);
    if (!checked.ok)
      return Promise.resolve({
        statusCode: null,
        error: `refused: ${checked.message}`,
        ...NO_ANSWER,
      });
    const url = checked.url;
    const secure = url.protocol === 'https:';
    const payload = Buffer.from(body);
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const options = {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(payload.length),
          'user-agent': 'ServicePay-Webhooks/1.0',
          'x-service-signature': signature,
          'x-service-event-id': delivery.eventId,
          'x-service-event-type': delivery.eventType,
          'x-service-delivery-id': delivery.id,
          'x-service-attempt': String(delivery.attemptCount + 1),
        },
        ...(isIP(hostOf(url)) === 0 ? { lookup: this.lookups[delivery.environment] } : {}),
      };
      const request = (secure ? httpsRequest : httpRequest)(url, options, (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let total = 0;
        // The address this very answer came from (after DNS and the connect-time check), not the URL's name.
        const revealed = this.revealsAnswerOf(response.socket?.remoteAddress ?? '');
        response.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (revealed && kept < RESPONSE_EXCERPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
          if (total > MAX_RESPONSE_BYTES) response.destroy();
        });
        const done = () =>
          finish({
            statusCode: response.statusCode ?? null,
            error: null,
            responseExcerpt: kept === 0 ? null : redact(Buffer.concat(chunks).toString('utf8')),
            responseExcerptWithheld: revealed ? null : 'receiver_not_public',
          });
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      });
      const onAbort = () => request.destroy(new Error('aborted'));
      const timeout = setTimeout(() => {
        request.destroy(new Error(`timed out after ${this.options.schedule.timeoutMs} ms`));
      }, this.options.schedule.timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error) => finish({ statusCode: null, error: describe(error), ...NO_ANSWER }));
      request.end(payload);
    });
  }

  /** The attempt and everything that follows from it, in one write. */
  private async record(
    delivery: DueDelivery,
    attemptedAt: number,
    latencyMs: number,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const { store, schedule, clock, logger } = this.options;
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
                now + jittered(delay, schedule.jitter, this.random),
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
}

/** `delay` scaled by a random factor in [1 - jitter, 1 + jitter]. */
export function jittered(delay: number, jitter: number, random: () => number = Math.random): number {
  return Math.round(delay * (1 - jitter + 2 * jitter * random()));
}

/**
 * The webhook body: `{ id, type, environment, createdAt, data: { session, credit?, refund? } }`. The session
 * JSON is the event's stored payload (and `credit`, `refund` its stored credit or refund), spliced in as is, so
 * the body is built without parsing it.
 */
export function webhookBody(
  delivery: Pick<DueDelivery, 'eventId' | 'eventType' | 'environment' | 'eventCreatedAt' | 'payload'> & {
    credit?: string | null;
    refund?: string | null;
  },
): string {
  const credit = delivery.credit ? `,"credit":${delivery.credit}` : '';
  const refund = delivery.refund ? `,"refund":${delivery.refund}` : '';
  return `{"id":${JSON.stringify(delivery.eventId)},"type":${JSON.stringify(delivery.eventType)},"environment":${JSON.stringify(delivery.environment)},"createdAt":${JSON.stringify(toIso(delivery.eventCreatedAt))},"data":{"session":${delivery.payload}${credit}${refund}}}`;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}
