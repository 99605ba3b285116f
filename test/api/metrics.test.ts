import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../reference-server/src/index.ts';
import { bankNotification, call, postNotification, testTransfer } from '../support/api.ts';
import { openCheckout, openStream, startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 28: "a Prometheus scrape of a running service shows a payment, a webhook delivery and a push in the
// counters and histograms". A real service (SQLite, and PostgreSQL in the `postgres` project) with its metrics
// listener on a port of its own, scraped over HTTP as Prometheus would, before and after the thing counted.

let server: RunningServer;
let clock: ManualClock;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** What the receiver answers: 200 unless a test says otherwise. */
let receiverStatus = 200;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-05-01T12:00:00Z'));
  receiver = await startReceiver((_received, res) => {
    res.statusCode = receiverStatus;
    res.end('ok');
  });
  server = await startServer(
    { metricsPort: 0, rateLimit: { perMinute: 10_000, failedAuthPerMinutePerAddress: 3 } },
    { clock },
  );
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** One scrape: the text format parsed into samples (`name{labels} value`). */
async function scrape(): Promise<Map<string, number>> {
  const response = await fetch(server.metricsUrl as string);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include every one of `labels` (0 when none). */
function value(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const [key, sample] of samples) {
    const brace = key.indexOf('{');
    if ((brace < 0 ? key : key.slice(0, brace)) !== name) continue;
    const text = brace < 0 ? '' : key.slice(brace);
    if (Object.entries(labels).every(([label, wanted]) => text.includes(`${label}="${wanted}"`)))
      total += sample;
  }
  return total;
}

/**
 * Scrapes until `ready` holds (the webhook worker and the push run after the answer), at most 10 s, calling
 * `between` after each scrape that was not.
 */
async function scrapeUntil(
  ready: (samples: Map<string, number>) => boolean,
  between: () => void = () => undefined,
): Promise<Map<string, number>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const samples = await scrape();
    if (ready(samples) || Date.now() > deadline) return samples;
    between();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('GET /metrics on its own listener', () => {
  it('is served on the metrics port in the Prometheus format, and not on the API address', async () => {
    const metrics = new URL(server.metricsUrl as string);
    expect(metrics.port).not.toBe(new URL(server.baseUrl).port);
    expect(metrics.hostname).toBe('127.0.0.1');
    const onApi = await call(server.baseUrl, 'GET', '/metrics');
    expect(onApi.status).toBe(404);
    expect(onApi.body.meta.code).toBe('route_not_found');
    const text = await (await fetch(metrics)).text();
    expect(text).toContain('# TYPE servicepay_http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('a payment moves the session, bank, push and webhook metrics, and a request is labelled by its route', async () => {
    const { secretKey } = (await server.createBusiness({ name: 'Metered Shop' })).keys.test;
    const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: secretKey,
      json: { url: receiver.url },
    });
    expect(endpoint.status).toBe(201);
    const before = await scrape();

    const checkout = await openCheckout(server.baseUrl, secretKey, 50_000);
    const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
    await stream.waitFor((frames) => frames.length > 0);
    const opened = await scrape();
    expect(value(opened, 'servicepay_push_streams_open')).toBe(
      value(before, 'servicepay_push_streams_open') + 1,
    );
    await testTransfer(server.baseUrl, secretKey, checkout.accountNumber, checkout.amount);
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'successful'));
    await stream.closed();
    const paidEvents = () => receiver.received.filter((r) => r.body.type === 'session.successful');
    const after = await scrapeUntil(
      (samples) =>
        paidEvents().length === 1 &&
        // The attempt is counted when its answer comes, the delivery marked done by the write after it.
        value(samples, 'servicepay_webhook_backlog_deliveries') === 0 &&
        value(samples, 'servicepay_webhook_delivery_attempt_seconds_count', { outcome: 'success' }) >
          value(before, 'servicepay_webhook_delivery_attempt_seconds_count', { outcome: 'success' }),
    );
    const moved = (name: string, labels: Record<string, string> = {}) =>
      value(after, name, labels) - value(before, name, labels);

    expect(moved('servicepay_sessions_created_total', { environment: 'test' })).toBe(1);
    expect(moved('servicepay_sessions_ended_total', { environment: 'test', outcome: 'successful' })).toBe(1);
    expect(moved('servicepay_bank_notification_processing_seconds_count', { result: 'credited' })).toBe(1);
    expect(moved('servicepay_push_streams_opened_total')).toBe(1);
    expect(moved('servicepay_push_latency_seconds_count')).toBe(1);
    expect(value(after, 'servicepay_push_streams_open')).toBe(value(before, 'servicepay_push_streams_open'));
    // The paid event reached the receiver in one successful attempt.
    expect(moved('servicepay_webhook_delivery_attempt_seconds_count', { outcome: 'success' })).toBe(1);
    expect(value(after, 'servicepay_webhook_backlog_deliveries')).toBe(0);
    // The create is counted under its route pattern, and a session's own route under `:id`, never its id.
    expect(
      moved('servicepay_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/widget/sessions',
        status: '201',
      }),
    ).toBe(1);
    expect([...after.keys()].some((key) => key.includes(checkout.sessionId))).toBe(false);
    expect([...after.keys()].some((key) => key.includes('route="/api/widget/sessions/:id/events"'))).toBe(
      true,
    );
    const store = server.onPostgres ? 'postgres' : 'sqlite';
    expect(moved('servicepay_db_write_seconds_count', { store, outcome: 'committed' })).toBeGreaterThan(0);
    // The PostgreSQL pool's connections (none on SQLite, which has no pool).
    expect(value(after, 'servicepay_db_pool_connections', { state: 'total' }) > 0).toBe(server.onPostgres);
    // Histograms: the +Inf bucket holds every observation.
    expect(value(after, 'servicepay_push_latency_seconds_bucket', { le: '+Inf' })).toBe(
      value(after, 'servicepay_push_latency_seconds_count'),
    );
  });

  it('a backlog shows its size and the age of its oldest delivery, and both fall back when it drains', async () => {
    const { secretKey } = (await server.createBusiness({ name: 'Backlogged Shop' })).keys.test;
    expect(
      (await call(server.baseUrl, 'POST', '/api/webhooks', { token: secretKey, json: { url: receiver.url } }))
        .status,
    ).toBe(201);
    receiverStatus = 503;
    const before = await scrape();
    const checkout = await openCheckout(server.baseUrl, secretKey);
    await testTransfer(server.baseUrl, secretKey, checkout.accountNumber, checkout.amount);
    // The first attempt fails; the retry waits for the (manual) clock.
    await scrapeUntil(
      (samples) =>
        value(samples, 'servicepay_webhook_delivery_attempt_seconds_count', { outcome: 'failure' }) >
        value(before, 'servicepay_webhook_delivery_attempt_seconds_count', { outcome: 'failure' }),
    );
    clock.advance(120_000);
    const backlogged = await scrape();
    expect(value(backlogged, 'servicepay_webhook_backlog_deliveries')).toBe(1);
    expect(value(backlogged, 'servicepay_webhook_backlog_oldest_age_seconds')).toBe(120);

    receiverStatus = 200;
    // An attempt still in flight may schedule its retry after any one move of the clock: keep it moving.
    const drained = await scrapeUntil(
      (samples) => value(samples, 'servicepay_webhook_backlog_deliveries') === 0,
      () => clock.advance(5_000),
    );
    expect(value(drained, 'servicepay_webhook_backlog_deliveries')).toBe(0);
    expect(value(drained, 'servicepay_webhook_backlog_oldest_age_seconds')).toBe(0);
  });

  it('a credit no session can take is counted as unapplied, with its reason', async () => {
    const { secretKey } = (await server.createBusiness({ name: 'Paid Twice Shop' })).keys.test;
    const checkout = await openCheckout(server.baseUrl, secretKey);
    await testTransfer(server.baseUrl, secretKey, checkout.accountNumber, checkout.amount);
    const before = await scrape();
    // A bank that credits the paid (closed) account again: the service records the credit to refund it.
    const again = bankNotification(checkout.accountNumber, checkout.amount);
    const answer = await postNotification(server, again, { nowMs: clock.now() });
    expect(answer.body.data.result).toBe('unapplied');
    const after = await scrapeUntil(
      (samples) =>
        value(samples, 'servicepay_unapplied_credits_total') >
        value(before, 'servicepay_unapplied_credits_total'),
    );
    const [credit] = await server.rows<{ reason: string }>(
      'SELECT reason FROM unapplied_credits WHERE transfer_id = ?',
      again.transfer.id,
    );
    const reason = { reason: String(credit?.reason) };
    expect(
      value(after, 'servicepay_unapplied_credits_total', reason) -
        value(before, 'servicepay_unapplied_credits_total', reason),
    ).toBe(1);
    expect(
      value(after, 'servicepay_bank_notification_processing_seconds_count', { result: 'unapplied' }) -
        value(before, 'servicepay_bank_notification_processing_seconds_count', { result: 'unapplied' }),
    ).toBe(1);
  });

  it('counts the 429s of failed authentication under their route', async () => {
    const before = await scrape();
    const answers: number[] = [];
    for (let n = 0; n < 4; n += 1) {
      answers.push(
        (await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: 'sk_test_wrongwrongwrong' }))
          .status,
      );
    }
    expect(answers).toEqual([401, 401, 401, 429]);
    const after = await scrape();
    expect(
      value(after, 'servicepay_rate_limited_total', { route: '/api/widget/sessions' }) -
        value(before, 'servicepay_rate_limited_total', { route: '/api/widget/sessions' }),
    ).toBe(1);
  });
});
