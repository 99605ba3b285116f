import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Writes } from '../db/repositories.ts';

/**
 * The service's Prometheus metrics (issue 28), in one registry of their own, and the small named functions the
 * rest of the code calls where the counted thing happens (one line each). Nothing is recorded until a service
 * exposes its metrics (`startRecording`): with metrics off (the default) each call returns at its first line.
 *
 * Labels are bounded: a route pattern, a status code, an outcome from a fixed list, an environment; never a
 * key, a session id, a business id or a raw URL.
 */
export const metricsRegistry = new Registry();

let recorders = 0;
let defaultsCollected = false;

/**
 * Records from now on (a service that exposes its metrics calls it when it starts; `stopRecording` when it
 * stops). Counted, so two services in one process (the tests) do not turn each other's recording off.
 */
export function startRecording(): void {
  recorders += 1;
  if (!defaultsCollected) {
    // Process CPU, memory, event-loop lag, GC: what an operator reads beside the service's own figures.
    collectDefaultMetrics({ register: metricsRegistry });
    defaultsCollected = true;
  }
}

/** One fewer service records; at zero nothing is recorded any more. */
export function stopRecording(): void {
  recorders = Math.max(0, recorders - 1);
}

/** Whether anything records now (the hooks' first test). */
export function recording(): boolean {
  return recorders > 0;
}

/** Latency buckets (seconds) for what a client waits on: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const registers = [metricsRegistry];

const httpRequestDuration = new Histogram({
  name: 'servicepay_http_request_duration_seconds',
  help: 'API requests by method, route pattern and status: their count and how long the answer took.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

const rateLimited = new Counter({
  name: 'servicepay_rate_limited_total',
  help: 'Requests answered 429 rate_limited, by route pattern ("early": refused before routing).',
  labelNames: ['route'] as const,
  registers,
});

const sessionsCreated = new Counter({
  name: 'servicepay_sessions_created_total',
  help: 'Checkout sessions created, by environment.',
  labelNames: ['environment'] as const,
  registers,
});

const sessionsEnded = new Counter({
  name: 'servicepay_sessions_ended_total',
  help: 'Checkout sessions that reached a final status, by environment and outcome (the status).',
  labelNames: ['environment', 'outcome'] as const,
  registers,
});

const bankNotifications = new Histogram({
  name: 'servicepay_bank_notification_processing_seconds',
  help: 'Bank notifications processed, by result (credited, mismatch, unapplied, ...): count and processing time.',
  labelNames: ['result'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

const webhookAttempts = new Histogram({
  name: 'servicepay_webhook_delivery_attempt_seconds',
  help: 'Webhook delivery attempts by outcome (success: 2xx; failure: another status; error: no answer): count and time to the answer.',
  labelNames: ['outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

const pushLatency = new Histogram({
  name: 'servicepay_push_latency_seconds',
  help: 'From a bank notification reaching this instance to the status it caused written to the open push streams of its session (on this instance).',
  buckets: LATENCY_BUCKETS,
  registers,
});

const pushStreamsOpened = new Counter({
  name: 'servicepay_push_streams_opened_total',
  help: 'Push streams (GET /api/widget/sessions/{id}/events) opened on this instance.',
  registers,
});

const unappliedCredits = new Counter({
  name: 'servicepay_unapplied_credits_total',
  help: 'Transfers the service could not apply to a session (a closed account, a second payment), by reason; each is refunded.',
  labelNames: ['reason'] as const,
  registers,
});

const dbWrites = new Histogram({
  name: 'servicepay_db_write_seconds',
  help: 'Write jobs (one transaction each) from being queued to committed, by store and outcome.',
  labelNames: ['store', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

/** What the gauges read from the running service when scraped (set by `observeService`). */
export interface ServiceGauges {
  /** Pending webhook deliveries and the creation time (ms) of the oldest, null when none. */
  webhookBacklog(): Promise<{ pending: number; oldestCreatedAt: number | null }>;
  /** Push streams open on this instance now. */
  openPushStreams(): number;
  /** PostgreSQL: the pool's connections; undefined on SQLite. */
  pool(): { total: number; idle: number; waiting: number } | undefined;
  /** Wall-clock now (ms), for the backlog's age. */
  now(): number;
}

let gauges: ServiceGauges | undefined;

/**
 * The service the gauges read when scraped; returns a function that lets go of it (when that service stops).
 * One service per process in production; in the tests the last one started is read.
 */
export function observeService(source: ServiceGauges): () => void {
  gauges = source;
  return () => {
    if (gauges === source) gauges = undefined;
  };
}

new Gauge({
  name: 'servicepay_webhook_backlog_deliveries',
  help: 'Webhook deliveries pending (waiting for their first or next attempt), across every instance.',
  registers,
  async collect() {
    if (gauges) this.set((await gauges.webhookBacklog()).pending);
  },
});

new Gauge({
  name: 'servicepay_webhook_backlog_oldest_age_seconds',
  help: 'Age of the oldest pending webhook delivery (0 when none is pending).',
  registers,
  async collect() {
    if (!gauges) return;
    const { oldestCreatedAt } = await gauges.webhookBacklog();
    this.set(oldestCreatedAt === null ? 0 : Math.max(0, (gauges.now() - oldestCreatedAt) / 1000));
  },
});

new Gauge({
  name: 'servicepay_push_streams_open',
  help: 'Push streams open on this instance.',
  registers,
  collect() {
    if (gauges) this.set(gauges.openPushStreams());
  },
});

new Gauge({
  name: 'servicepay_db_pool_connections',
  help: 'PostgreSQL pool connections of this instance, by state (total, idle; waiting: requests queued for one).',
  labelNames: ['state'] as const,
  registers,
  collect() {
    const pool = gauges?.pool();
    if (!pool) return;
    this.set({ state: 'total' }, pool.total);
    this.set({ state: 'idle' }, pool.idle);
    this.set({ state: 'waiting' }, pool.waiting);
  },
});

const ready = new Gauge({
  name: 'servicepay_ready',
  help: 'What /health/ready last answered: 1 ready (200), 0 not (503). Set by the probes themselves.',
  registers,
});

/** `/health/ready` answered: ready or not. */
export function readinessAnswered(isReady: boolean): void {
  if (recording()) ready.set(isReady ? 1 : 0);
}

/**
 * One API answer: `route` is the express route pattern (`/api/sessions/:id`), or `unmatched`; never the URL.
 *
 * @example
 * requestAnswered('GET', '/api/sessions/:id', 200, 0.004);
 */
export function requestAnswered(method: string, route: string, status: number, seconds: number): void {
  if (!recording()) return;
  httpRequestDuration.observe({ method, route, status: String(status) }, seconds);
  if (status === 429) rateLimited.inc({ route });
}

/** A 429 answered before express saw the request (`refuseOverBudgetEarly`). */
export function refusedEarly(): void {
  if (recording()) rateLimited.inc({ route: 'early' });
}

/** A session was created (after its commit). */
export function sessionCreated(environment: string): void {
  if (recording()) sessionsCreated.inc({ environment });
}

/** A session reached a final status (after its commit): `outcome` is that status. */
export function sessionEnded(environment: string, outcome: string): void {
  if (recording()) sessionsEnded.inc({ environment, outcome });
}

/**
 * Before a bank notification is processed: returns what to call with its result. The time it started is kept
 * (bounded) until the push it causes is written (`notificationMatched`, then `pushWritten`).
 *
 * @example
 * const processed = bankNotificationStarted(notification.id);
 * processed(result);
 */
export function bankNotificationStarted(notificationId: string): (result: string) => void {
  if (!recording()) return () => undefined;
  const started = performance.now();
  remember(notificationId, started);
  return (result) => {
    awaitingPush.delete(notificationId);
    bankNotifications.observe({ result }, (performance.now() - started) / 1000);
  };
}

/** The notification being processed is for session `sessionId`: its push is the one timed. */
export function notificationMatched(notificationId: string, sessionId: string): void {
  const started = awaitingPush.get(notificationId);
  if (started !== undefined) remember(sessionId, started);
}

/**
 * Notifications waiting for their push, by notification id and then by session id: bounded, oldest dropped
 * first (a session whose push never comes, no stream being open for it, is forgotten that way).
 */
const awaitingPush = new Map<string, number>();
const MAX_AWAITING_PUSH = 10_000;

function remember(key: string, started: number): void {
  awaitingPush.set(key, started);
  if (awaitingPush.size > MAX_AWAITING_PUSH) {
    const oldest = awaitingPush.keys().next().value;
    if (oldest !== undefined) awaitingPush.delete(oldest);
  }
}

/** A status was written to the open streams of session `sessionId` on this instance. */
export function pushWritten(sessionId: string): void {
  if (!recording()) return;
  const started = awaitingPush.get(sessionId);
  if (started === undefined) return;
  awaitingPush.delete(sessionId);
  pushLatency.observe((performance.now() - started) / 1000);
}

/** A push stream opened. */
export function pushStreamOpened(): void {
  if (recording()) pushStreamsOpened.inc();
}

/** A webhook attempt ended: `statusCode` null when no answer came. */
export function deliveryAttempted(statusCode: number | null, seconds: number): void {
  if (!recording()) return;
  const outcome =
    statusCode === null ? 'error' : statusCode >= 200 && statusCode < 300 ? 'success' : 'failure';
  webhookAttempts.observe({ outcome }, seconds);
}

/** A transfer that could not be applied was recorded (to be refunded). */
export function creditUnapplied(reason: string): void {
  if (recording()) unappliedCredits.inc({ reason });
}

/**
 * Times every write job of `writes` (queued to committed, or failed), labelled by `store`.
 *
 * @example
 * const writes = timedWrites(store.writes, 'sqlite');
 */
export function timedWrites<R, W extends Writes<R>>(writes: W, store: string): W {
  const run: Writes<R>['run'] = async (work, options) => {
    if (!recording()) return writes.run(work, options);
    const started = performance.now();
    try {
      const result = await writes.run(work, options);
      dbWrites.observe({ store, outcome: 'committed' }, (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      dbWrites.observe({ store, outcome: 'failed' }, (performance.now() - started) / 1000);
      throw error;
    }
  };
  return { ...writes, run };
}
