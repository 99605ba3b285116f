/**
 * The server side of bench/push-latency.ts, in its own process so that its memory and its event loop are
 * measured alone. Answers over IPC (see push-ipc.ts):
 * - `sessions { count }` → creates and bootstraps that many sessions (through the service's own code) and
 *   answers their ids, widget tokens and accounts;
 * - `memory` → heap and RSS after a full GC, and the number of open push streams;
 * - `window-start` / `window-stop` → the event-loop lag, CPU time, GC pauses and write transactions between
 *   the two (and, when started with `SERVICEPAY_BENCH_PROFILE=path.cpuprofile`, a CPU profile of that window
 *   written to that path).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session as InspectorSession } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { CreateSessionParamsSchema } from '@servicepay/node/protocol';
import { createBusiness, createService, silentLogger } from '../../reference-server/src/index.ts';
import type { ApiCaller } from '../../reference-server/src/middleware/authenticate.ts';
import { scrapeEverySecond } from './metrics-scraper.ts';
import { answerParent, lagMonitor } from './push-ipc.ts';

// SERVICEPAY_BENCH_DB_DIR puts the database elsewhere (a RAM disk, to see what the push costs without the
// commit's fsync); by default it is on the system's temporary folder, a real disk.
const folder = mkdtempSync(join(process.env.SERVICEPAY_BENCH_DB_DIR ?? tmpdir(), 'servicepay-bench-push-'));
const service = createService(
  {
    dbPath: join(folder, 'servicepay.db'),
    port: 0,
    testWidgetPort: 0,
    liveWidgetPort: 0,
    // Every stream of the bench comes from one address: the abuse caps (issue 8) are lifted for this server
    // only; the defaults stay as they are.
    rateLimit: {
      perMinute: 10_000_000,
      widgetPerMinutePerAddress: 10_000_000,
      streamsPerAddress: 1_000_000,
    },
    maxConnections: 100_000,
    // The same for the connections one address may hold: every stream of the bench comes from loopback.
    maxConnectionsPerAddress: 100_000,
    // SERVICEPAY_BENCH_METRICS=1 (bench/metrics-cost.ts): metrics recorded and served, scraped below.
    metricsPort: process.env.SERVICEPAY_BENCH_METRICS === '1' ? 0 : null,
  },
  { logger: silentLogger },
);
/**
 * The longest commit of the window, to tell a stall of the disk from one of the push: every COMMIT with its
 * fsync on the event loop, those of the write queue's batches (`WriteQueue` commits a prepared `COMMIT`) and
 * the outermost `transaction` calls of the same connection (the simulated bank's books write in their own).
 * In this bench's server only: the private statement is reached by name, so a renamed field fails loudly here.
 */
const writes = { count: 0, max: 0, over10: 0 };
function timed<A extends unknown[], T>(work: (...args: A) => T): (...args: A) => T {
  return (...args: A) => {
    const started = performance.now();
    try {
      return work(...args);
    } finally {
      const took = performance.now() - started;
      writes.count += 1;
      writes.max = Math.max(writes.max, took);
      if (took > 10) writes.over10 += 1;
    }
  };
}
// The queue itself, under the watch that tells /health of a full disk (db/storage-health.ts).
const { watched } = service.deps.store.writes as unknown as { watched?: unknown };
const queue = watched as { statements?: { commit?: { run: () => unknown } } };
const commit = queue.statements?.commit;
if (!commit) throw new Error('push-server: the write queue has no prepared COMMIT to time (renamed?)');
commit.run = timed(commit.run.bind(commit));
const database = service.db;
const transaction = database.transaction.bind(database);
let depth = 0;
database.transaction = ((work: (...args: unknown[]) => unknown) => {
  const run = transaction(work);
  const timedRun = timed(run);
  return (...args: unknown[]) => {
    if (depth > 0) return run(...args);
    depth += 1;
    try {
      return timedRun(...args);
    } finally {
      depth -= 1;
    }
  };
}) as typeof database.transaction;
const { url, metricsUrl } = await service.start();
if (metricsUrl) scrapeEverySecond(metricsUrl);
const created = await createBusiness(service.deps.store, 'Bench Shop', false, Date.now());
const business = await service.deps.store.businesses.find(created.business.id);
if (!business) throw new Error('no business');
const caller: ApiCaller = { kind: 'secret', business, environment: 'test' };
const params = CreateSessionParamsSchema.parse({
  amount: 10_000,
  currency: 'NGN',
  payer: { name: 'Ada', email: 'ada@example.com' },
});

const gc = (globalThis as { gc?: () => void }).gc;
const lag = lagMonitor();
const profilePath = process.env.SERVICEPAY_BENCH_PROFILE;
const inspector = profilePath ? new InspectorSession() : undefined;
let cpuAtStart = process.cpuUsage();
/** Garbage-collection pauses over the window: major (mark-compact) and the rest, count and longest. */
const pauses = { major: 0, majorMax: 0, minor: 0, minorMax: 0 };
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
    const major = detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
    if (major) {
      pauses.major += 1;
      pauses.majorMax = Math.max(pauses.majorMax, entry.duration);
    } else {
      pauses.minor += 1;
      pauses.minorMax = Math.max(pauses.minorMax, entry.duration);
    }
  }
});
let startedAt = performance.now();

answerParent(async (message) => {
  switch (message.type) {
    case 'sessions': {
      const count = Number(message.count);
      const out: Array<{ sessionId: string; token: string; accountNumber: string; amount: number }> = [];
      for (let done = 0; done < count; done += 500) {
        const batch = Math.min(500, count - done);
        const made = await Promise.all(
          Array.from({ length: batch }, () => service.deps.sessions.create(caller, params)),
        );
        const booted = await Promise.all(
          made.map((result) => service.deps.sessions.bootstrap(result.clientSecret)),
        );
        for (const boot of booted) {
          out.push({
            sessionId: boot.session.id,
            token: boot.token,
            accountNumber: boot.virtualAccount.accountNumber,
            amount: boot.session.amount,
          });
        }
      }
      return { sessions: out };
    }
    case 'memory': {
      gc?.();
      gc?.();
      const memory = process.memoryUsage();
      return {
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        rss: memory.rss,
        open: service.deps.pushStreams.size,
      };
    }
    case 'window-start': {
      if (inspector) {
        inspector.connect();
        await inspector.post('Profiler.enable');
        await inspector.post('Profiler.start');
      }
      lag.start();
      Object.assign(pauses, { major: 0, majorMax: 0, minor: 0, minorMax: 0 });
      Object.assign(writes, { count: 0, max: 0, over10: 0 });
      gcObserver.observe({ entryTypes: ['gc'] });
      cpuAtStart = process.cpuUsage();
      startedAt = performance.now();
      return {};
    }
    case 'window-stop': {
      const cpu = process.cpuUsage(cpuAtStart);
      const elapsed = performance.now() - startedAt;
      const loop = lag.stop();
      gcObserver.disconnect();
      if (inspector && profilePath) {
        const { profile } = await inspector.post('Profiler.stop');
        writeFileSync(profilePath, JSON.stringify(profile));
        inspector.disconnect();
      }
      return {
        lag: loop,
        cpuPercent: ((cpu.user + cpu.system) / 1000 / elapsed) * 100,
        gc: { ...pauses },
        writes: { ...writes },
      };
    }
    case 'stop': {
      await service.close();
      rmSync(folder, { recursive: true, force: true });
      setImmediate(() => process.exit(0));
      return {};
    }
    default:
      return { error: `unknown request ${message.type}` };
  }
});

process.send?.({ type: 'ready', url, bankSecret: service.config.bank.secret });
