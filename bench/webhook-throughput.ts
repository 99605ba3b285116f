/**
 * Webhook delivery throughput and backlog drain.
 *
 *   node --import tsx bench/webhook-throughput.ts [--burst 10000] [--backlog 100000]
 *
 * The service runs in this process (its worker as in production, 64 attempts in flight); the receiver runs in a
 * child process. The backlog is written while the service is stopped: one real cancelled session gives the
 * event payload, then N events and their pending deliveries are inserted in one transaction (how they got
 * there is not what is measured). Then the service starts and the time until the receiver has seen every event
 * id is measured, and the database is checked: every delivery succeeded. Baseline: the same receiver driven by
 * a bare HTTP client at the same concurrency, with no database, no signing and no records (the ceiling).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CreateSessionParamsSchema } from '@servicepay/node/protocol';
import { createApp, createBusiness, createService, silentLogger } from '../reference-server/src/index.ts';
import { newId } from '../reference-server/src/internal/random.ts';
import type { ApiCaller } from '../reference-server/src/middleware/authenticate.ts';
import { reportTarget } from './support/targets.ts';

const { values } = parseArgs({
  options: { burst: { type: 'string', default: '10000' }, backlog: { type: 'string', default: '100000' } },
});
const CONCURRENCY = 64;

type Reply = { type: string; [key: string]: unknown };
const receiver = fork(fileURLToPath(new URL('./support/webhook-receiver.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const ask = (message: object) =>
  new Promise<Reply>((resolve) => {
    receiver.once('message', resolve);
    if (Object.keys(message).length > 0) receiver.send(message);
  });
const { url } = (await ask({})) as unknown as { url: string };
const target = new URL(url);

async function baseline(count: number): Promise<number> {
  await ask({ type: 'reset' });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = Buffer.from(JSON.stringify({ id: 'evt_x', type: 'session.cancelled', data: { session: {} } }));
  let sent = 0;
  const started = performance.now();
  const worker = async () => {
    while (sent < count) {
      const id = `evt_${sent}`;
      sent += 1;
      await new Promise<void>((resolve, reject) => {
        const req = request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              'content-length': body.length,
              'x-service-event-id': id,
            },
          },
          (res) => {
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return count / seconds;
}

async function drain(
  count: number,
): Promise<{ seconds: number; distinct: number; succeeded: number; posts: number }> {
  await ask({ type: 'reset' });
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-bench-webhooks-'));
  const dbPath = join(folder, 'servicepay.db');
  try {
    // Setup with the service stopped: business, endpoint, one real event, then the backlog.
    const setup = createService(
      { dbPath, port: 0, testWidgetPort: 0, liveWidgetPort: 0, webhooks: { schedule: 'fast' } },
      { logger: silentLogger },
    );
    const { business: created, keys } = await createBusiness(
      setup.deps.store,
      'Bench Shop',
      false,
      Date.now(),
    );
    const app = createApp(setup.deps).listen(0, '127.0.0.1');
    await new Promise((resolve) => app.once('listening', resolve));
    const address = app.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${address.port}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.test.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    const endpointId = ((await response.json()) as { data: { id: string } }).data.id;
    await new Promise((resolve) => app.close(resolve));
    const business = await setup.deps.store.businesses.find(created.id);
    if (!business) throw new Error('no business');
    const caller: ApiCaller = { kind: 'secret', business, environment: 'test' };
    const session = await setup.deps.sessions.create(
      caller,
      CreateSessionParamsSchema.parse({
        amount: 10_000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'a@example.com' },
      }),
    );
    await setup.deps.sessions.cancel(session.id, 'cancelled_by_merchant', caller);
    const { db } = setup;
    const template = db
      .prepare<[], { session_id: string; payload: string }>(
        "SELECT session_id, payload FROM events WHERE type = 'session.cancelled'",
      )
      .get();
    if (!template) throw new Error('no template event');
    db.prepare('DELETE FROM webhook_deliveries').run();
    const insertEvent = db.prepare(
      `INSERT INTO events (id, business_id, environment, session_id, type, reason, payload, created_at)
       VALUES (?, ?, 'test', ?, 'session.cancelled', 'cancelled_by_merchant', ?, ?)`,
    );
    const insertDelivery = db.prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`,
    );
    const now = Date.now();
    db.transaction(() => {
      for (let i = 0; i < count; i += 1) {
        const eventId = newId('evt');
        insertEvent.run(eventId, business.id, template.session_id, template.payload, now);
        insertDelivery.run(newId('wd'), endpointId, eventId, now, now, now);
      }
    })();
    await setup.close();

    const service = createService(
      { dbPath, port: 0, testWidgetPort: 0, liveWidgetPort: 0, webhooks: { schedule: 'fast' } },
      { logger: silentLogger },
    );
    const started = performance.now();
    await service.start();
    let counted = { posts: 0, distinct: 0 };
    while (counted.distinct < count) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      counted = (await ask({ type: 'count' })) as unknown as { posts: number; distinct: number };
      if (performance.now() - started > 170_000) break;
    }
    const seconds = (performance.now() - started) / 1000;
    await service.close();
    const check = createService(
      { dbPath, port: 0, testWidgetPort: 0, liveWidgetPort: 0 },
      { logger: silentLogger },
    );
    const succeeded =
      check.db
        .prepare<[], { n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'")
        .get()?.n ?? 0;
    await check.close();
    return { seconds, distinct: counted.distinct, succeeded, posts: counted.posts };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const burst = Number(values.burst);
const backlog = Number(values.backlog);
const ceiling = await baseline(burst);
const small = await drain(burst);
const large = await drain(backlog);

console.log(`\nWebhook delivery to a local receiver (${CONCURRENCY} in flight)`);
console.log(
  '| run | events | time | deliveries/s | distinct ids received | deliveries succeeded (db) | posts | target |',
);
console.log('|---|---|---|---|---|---|---|---|');
console.log(
  `| baseline: bare HTTP client, no db/signing | ${burst} | — | ${ceiling.toFixed(0)} | — | — | — | ceiling |`,
);
for (const [name, run, count] of [
  ['burst', small, burst],
  ['backlog drain', large, backlog],
] as const) {
  console.log(
    `| ${name} | ${count} | ${run.seconds.toFixed(1)} s | ${(count / run.seconds).toFixed(0)} | ${run.distinct} | ${run.succeeded} | ${run.posts} | ≥ 1,000/s, nothing lost |`,
  );
  const perSecond = count / run.seconds;
  reportTarget({
    measure: `webhooks: ${name} of ${count} events, deliveries/s, none lost`,
    figure: `${perSecond.toFixed(0)}/s, ${run.distinct} of ${count} received, ${run.succeeded} succeeded`,
    baseline: `bare HTTP client ${ceiling.toFixed(0)}/s`,
    target: '≥ 1,000/s, nothing lost',
    met: perSecond >= 1000 && run.distinct === count && run.succeeded === count,
  });
}
receiver.send({ type: 'stop' });
