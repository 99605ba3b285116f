/**
 * Push latency and memory per open stream: bank notification → `successful` on that session's SSE stream.
 *
 *   node --import tsx bench/push-latency.ts [--streams 10000] [--duration 60] [--baseline-duration 60]
 *     [--rate 50] [--pool 32] [--profile server.cpuprofile] [--db-dir /dev/shm] [--metrics]
 *
 * Three processes, so that none of them times or holds what another measures:
 * - the server (support/push-server.ts): the service alone; its event-loop lag, CPU time and memory are taken
 *   there (memory after a full GC);
 * - the holder (support/push-clients.ts): the idle open streams, bare sockets that read their heartbeats;
 * - this process: the sender and the watcher (support/push-sampler.ts). It keeps a small pool of streams open on sessions it will pay,
 *   posts a signed bank notification for one of them at random (Poisson) times, `--rate` a second on average
 *   (whatever the previous sample is doing, so that a stall in the server delays every sample sent during it
 *   instead of delaying the next send), and records, per sample, the time from just before the notification's
 *   bytes are written to the arrival of the `successful` message on that session's stream. Both times are read
 *   from one monotonic clock. It also holds no more than `--pool` streams, so its own loop stays idle.
 *
 * Rows: the baseline (one open stream: the pool is one stream), then `--streams` open streams (the holder's
 * plus the pool). Each is sampled for 60 s, four heartbeat intervals (the same window for both, so that a rare
 * stall of the machine is as likely in either). Printed: p50/p99/p99.9/max and the sample count, the server's
 * event-loop lag and CPU over the sampling window, the holder's lag and the longest silence on an idle stream
 * (the heartbeat interval as a client sees it), server heap and RSS per open stream ((at N − at 0) / N, after a
 * full GC). Secondary, and named so: the notification's own round trip
 * (send → its 200), which is not the push latency.
 *
 * `--profile FILE` writes a CPU profile of the server over the loaded window (read it with
 * support/push-profile.ts). `--db-dir DIR` puts the server's database in DIR instead of the temporary folder:
 * on a RAM disk (/dev/shm) the commit's fsync costs nothing, which shows what the push itself costs; the
 * default (a real disk) is the figure that counts.
 */
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { forkChild, type Lag, lagMonitor } from './support/push-ipc.ts';
import { Sampler, type Session } from './support/push-sampler.ts';
import { reportTarget } from './support/targets.ts';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '60' },
    'baseline-duration': { type: 'string', default: '60' },
    rate: { type: 'string', default: '50' },
    pool: { type: 'string', default: '32' },
    profile: { type: 'string' },
    'db-dir': { type: 'string' },
    // Issue 28: the server records and serves its metrics, scraped every second (bench/metrics-cost.ts).
    metrics: { type: 'boolean', default: false },
  },
});
const streams = Number(values.streams);
const durationMs = Number(values.duration) * 1000;
const baselineMs = Number(values['baseline-duration']) * 1000;
const rate = Number(values.rate);
const poolSize = Math.min(Number(values.pool), streams);
const TARGET = { p99: 10, p999: 20, rssPerStream: 16 * 1024 };

/** `heapTotal` is the heap V8 has reserved (part of the RSS); `heapUsed`, what live objects take of it. */
type Memory = { heapUsed: number; heapTotal: number; rss: number; open: number };
type Window = {
  lag: Lag;
  cpuPercent: number;
  gc: { major: number; majorMax: number; minor: number; minorMax: number };
  writes: { count: number; max: number; over10: number };
};
type HolderWindow = { lag: Lag; heartbeats: number; longestSilence: number; open: number };

const startedAt = Date.now();
const server = await forkChild('push-server.ts', ['--expose-gc'], {
  ...(values.profile ? { SERVICEPAY_BENCH_PROFILE: values.profile } : {}),
  ...(values['db-dir'] ? { SERVICEPAY_BENCH_DB_DIR: values['db-dir'] } : {}),
  ...(values.metrics ? { SERVICEPAY_BENCH_METRICS: '1' } : {}),
});
const holder = await forkChild('push-clients.ts');
const base = new URL(String(server.ready.url));
const bankSecret = String(server.ready.bankSecret);
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const target = { base, bankSecret, agent, rate };

const sorted = (list: number[]) => [...list].sort((a, b) => a - b);
const percentile = (list: number[], p: number) =>
  list[Math.min(list.length - 1, Math.ceil((p / 100) * list.length) - 1)] ?? Number.NaN;

type Row = {
  label: string;
  open: number;
  seconds: number;
  latency: number[];
  answered: number[];
  waitedForPool: number;
  server: Window;
  holder?: HolderWindow;
  sender: Lag;
  memory?: { heapPerStream: number; heapReservedPerStream: number; rssPerStream: number };
};

async function measure(label: string, idle: Session[], sampled: Session[], pool: number, ms: number) {
  const before = await server.ask<Memory>({ type: 'memory' });
  if (idle.length > 0) {
    await holder.ask({ type: 'open', host: base.hostname, port: Number(base.port), sessions: idle });
  }
  const sampler = new Sampler(target, sampled, pool);
  await sampler.fill();
  const after = await server.ask<Memory>({ type: 'memory' });
  const senderLag = lagMonitor();
  await server.ask({ type: 'window-start' });
  await holder.ask({ type: 'window-start' });
  senderLag.start();
  const result = await sampler.run(ms);
  const sender = senderLag.stop();
  const holderWindow = await holder.ask<HolderWindow>({ type: 'window-stop' });
  const serverWindow = await server.ask<Window>({ type: 'window-stop' });
  sampler.close();
  await holder.ask({ type: 'close' });
  const row: Row = {
    label,
    open: idle.length + pool,
    seconds: ms / 1000,
    latency: sorted(result.latencies),
    answered: sorted(result.answered),
    waitedForPool: result.waitedForPool,
    server: serverWindow,
    sender,
  };
  if (idle.length > 0) row.holder = holderWindow;
  if (idle.length > 0) {
    row.memory = {
      heapPerStream: (after.heapUsed - before.heapUsed) / after.open,
      heapReservedPerStream: (after.heapTotal - before.heapTotal) / after.open,
      rssPerStream: (after.rss - before.rss) / after.open,
    };
  }
  return row;
}

const perRow = (ms: number) => Math.ceil((rate * ms * 1.6) / 1000) + 64;
const sampledBaseline = (
  await server.ask<{ sessions: Session[] }>({ type: 'sessions', count: perRow(baselineMs) })
).sessions;
const loaded = (
  await server.ask<{ sessions: Session[] }>({
    type: 'sessions',
    count: streams + perRow(durationMs),
  })
).sessions;
const idle = loaded.slice(0, streams - poolSize);
const sampledLoaded = loaded.slice(streams - poolSize);

const rows = [
  await measure('baseline: 1 open stream', [], sampledBaseline, 1, baselineMs),
  await measure(`${streams} open streams`, idle, sampledLoaded, poolSize, durationMs),
];

const ms = (value: number) => `${value.toFixed(2)} ms`;
const kb = (value: number) => `${(value / 1024).toFixed(1)} KB`;
const baseline = rows[0] as Row;
const loadedRow = rows[1] as Row;
console.log('\nPush latency: from sending the signed bank notification to `successful` on that stream');
if (values['db-dir']) console.log(`(database in ${values['db-dir']}, not the default temporary folder)`);
if (values.metrics) console.log('(metrics on: recorded, served on their own port, scraped every second)');
console.log(
  `(Poisson arrivals, ${rate}/s on average; idle streams held by a separate process; see the header of this file)`,
);
console.log(
  '| open streams | sampled for | samples | p50 | p99 | p99.9 | max | server loop lag p50 / p99 / max | server CPU |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const l = row.latency;
  console.log(
    `| ${row.label} | ${row.seconds} s | ${l.length} | ${ms(percentile(l, 50))} | ${ms(percentile(l, 99))} | ${ms(percentile(l, 99.9))} | ${ms(l.at(-1) ?? Number.NaN)} | ${ms(row.server.lag.p50)} / ${ms(row.server.lag.p99)} / ${ms(row.server.lag.max)} | ${row.server.cpuPercent.toFixed(0)}% |`,
  );
}
const ratio = (p: number) => (percentile(loadedRow.latency, p) / percentile(baseline.latency, p)).toFixed(2);
console.log(
  `Ratio ${streams} streams / baseline: p50 ${ratio(50)}×, p99 ${ratio(99)}×, p99.9 ${ratio(99.9)}×. ` +
    `Targets at ${streams} streams: p99 ≤ ${TARGET.p99} ms (${ms(percentile(loadedRow.latency, 99))}), ` +
    `p99.9 ≤ ${TARGET.p999} ms (${ms(percentile(loadedRow.latency, 99.9))}).`,
);
if (loadedRow.memory) {
  console.log(
    `Server memory per open stream (after a full GC, (at ${loadedRow.open} − at 0) / ${loadedRow.open}): ` +
      `RSS ${kb(loadedRow.memory.rssPerStream)} (target ≤ ${kb(TARGET.rssPerStream)}), heap ${kb(loadedRow.memory.heapPerStream)} ` +
      `in use of ${kb(loadedRow.memory.heapReservedPerStream)} reserved by V8 (the reserve, sized by V8's own heuristics, is part of the RSS).`,
  );
}
if (loadedRow.holder) {
  console.log(
    `Idle streams: ${loadedRow.holder.open} held, ${loadedRow.holder.heartbeats} heartbeats received in ` +
      `${loadedRow.seconds} s, longest silence on one stream ${(loadedRow.holder.longestSilence / 1000).toFixed(1)} s; ` +
      `holder loop lag p99 ${ms(loadedRow.holder.lag.p99)}, max ${ms(loadedRow.holder.lag.max)}.`,
  );
}
for (const row of rows) {
  const { gc, writes } = row.server;
  console.log(
    `Server stalls (${row.label}): GC ${gc.major} major, longest ${ms(gc.majorMax)}; ${gc.minor} minor, longest ${ms(gc.minorMax)}; ` +
      `${writes.count} commits (COMMIT and its fsync, on the event loop), longest ${ms(writes.max)}, ${writes.over10} over 10 ms.`,
  );
}
for (const row of rows) {
  console.log(
    `Secondary (${row.label}): the notification's own round trip, send → its 200, p50 ${ms(percentile(row.answered, 50))}, ` +
      `p99 ${ms(percentile(row.answered, 99))}; sender loop lag p99 ${ms(row.sender.p99)}, max ${ms(row.sender.max)}` +
      `${row.waitedForPool > 0 ? `; ${row.waitedForPool} sends waited for a pool stream` : ''}.`,
  );
}
console.log(`(${((Date.now() - startedAt) / 1000).toFixed(0)} s in all)`);
const loadedP99 = percentile(loadedRow.latency, 99);
const loadedP999 = percentile(loadedRow.latency, 99.9);
const where = values['db-dir'] ? `, database in ${values['db-dir']}` : '';
reportTarget({
  measure: `bank notification → SSE client at ${streams} open streams, p99 over ${loadedRow.seconds} s${where}`,
  figure: `p99 ${ms(loadedP99)} (${loadedRow.latency.length} samples)`,
  baseline: `1 open stream: p99 ${ms(percentile(baseline.latency, 99))}`,
  target: `≤ ${TARGET.p99} ms`,
  met: loadedP99 <= TARGET.p99,
});
reportTarget({
  measure: `bank notification → SSE client at ${streams} open streams, p99.9 over ${loadedRow.seconds} s${where}`,
  figure: `p99.9 ${ms(loadedP999)}, max ${ms(loadedRow.latency.at(-1) ?? Number.NaN)}`,
  baseline: `1 open stream: p99.9 ${ms(percentile(baseline.latency, 99.9))}`,
  target: `≤ ${TARGET.p999} ms`,
  met: loadedP999 <= TARGET.p999,
});
if (loadedRow.memory) {
  reportTarget({
    measure: 'server memory per open stream (RSS after a full GC)',
    figure: `${kb(loadedRow.memory.rssPerStream)} RSS (heap ${kb(loadedRow.memory.heapPerStream)} in use, ${kb(loadedRow.memory.heapReservedPerStream)} reserved)`,
    baseline: '0 open streams, same server',
    target: `≤ ${kb(TARGET.rssPerStream)}`,
    met: loadedRow.memory.rssPerStream <= TARGET.rssPerStream,
  });
}
await holder.stop();
await server.stop();
agent.destroy();
