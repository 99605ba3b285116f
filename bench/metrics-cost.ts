/**
 * What the metrics cost (issue 28: "the push and create benchmarks with metrics on stay within 5 % of
 * today"): each measured with metrics off (today: nothing recorded, nothing served) and on (recorded, served on
 * their own port, scraped every second, `support/metrics-scraper.ts`), in the same run, and the ratio printed.
 *
 * - Session create: the keyed create of `session-create.ts` (autocannon in its own process, fsynced, an SDK
 *   `Idempotency-Key`) against two servers, one with `--metrics`, alternated round after round so that drift
 *   falls on both. Ratio: answers per second on / off (target ≥ 0.95).
 * - Push: `push-latency.ts` run twice, off then on, at `BENCH_PUSH_STREAMS` open streams (2000) sampled for
 *   `BENCH_PUSH_SECONDS` (20): the notification → push p50 and p99 on / off (target: p99 ≤ 1.05× off, or within
 *   0.5 ms of it, since a p99 of a few milliseconds moves by more than 5 % between two runs of the same server).
 *
 * `BENCH_CONNECTIONS` (50), `BENCH_DURATION_MS` per create run (5000), `BENCH_ROUNDS` (3).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  combine,
  cpuSeconds,
  fmt,
  type LoadOptions,
  type LoadResult,
  runLoad,
  startBenchServer,
  stopBenchServer,
  verdict,
} from './support/load.ts';
import { reportTarget } from './support/targets.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PUSH_STREAMS = Number(process.env.BENCH_PUSH_STREAMS ?? 2000);
const PUSH_SECONDS = Number(process.env.BENCH_PUSH_SECONDS ?? 20);
const TARGET = 0.95;

// --- Session create, off and on, alternated ---------------------------------------------------------------
const off = await startBenchServer('servicepay');
const on = await startBenchServer('servicepay', ['--metrics']);
const createRun = (server: typeof off): LoadOptions => ({
  url: server.url,
  method: 'POST',
  path: '/api/widget/sessions',
  connections: CONNECTIONS,
  durationMs: DURATION_MS,
  warmupMs: 1000,
  ...(server.secretKey ? { token: server.secretKey } : {}),
  body: 'session',
  idempotencyKey: 'sdk',
  expectStatus: 201,
});
const results: Record<'off' | 'on', LoadResult[]> = { off: [], on: [] };
const cpu = { off: 0, on: 0 };
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const server = kind === 'off' ? off : on;
      const before = cpuSeconds(server.child);
      results[kind].push(await runLoad(createRun(server)));
      cpu[kind] += cpuSeconds(server.child) - before;
    }
  }
} finally {
  await stopBenchServer(off);
  await stopBenchServer(on);
}
const createOff = combine(results.off);
const createOn = combine(results.on);
const createRatio = createOn.perSecond / createOff.perSecond;
const answers = (result: LoadResult) => result.perSecond * ((DURATION_MS + 1000) / 1000) * ROUNDS;
console.log(
  `\nSession create with metrics off and on, autocannon -c ${CONNECTIONS}, ${ROUNDS} × ${DURATION_MS / 1000} s each, alternated`,
);
console.log('| metrics | creates/s | p50 ms | p99 ms | p99.9 ms | max ms | errors | server CPU µs/create |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, result, seconds] of [
  ['off (today)', createOff, cpu.off],
  ['on, scraped every second', createOn, cpu.on],
] as const) {
  console.log(
    `| ${name} | ${fmt(result.perSecond, 0)} | ${fmt(result.p50Ms, 2)} | ${fmt(result.p99Ms, 2)} | ${fmt(result.p999Ms, 2)} | ${fmt(result.maxMs, 2)} | ${result.errors} | ${fmt((seconds / answers(result)) * 1e6, 0)} |`,
  );
}
console.log(
  `Create, metrics on / off: ${fmt(createRatio, 3)}×; target ≥ ${TARGET}× → ${verdict(createRatio >= TARGET)}`,
);
reportTarget({
  measure: 'session create with metrics on vs off (same run, alternated)',
  figure: `${fmt(createRatio, 3)}× (${fmt(createOn.perSecond, 0)}/s, p99 ${fmt(createOn.p99Ms, 1)} ms)`,
  baseline: `metrics off ${fmt(createOff.perSecond, 0)}/s, p99 ${fmt(createOff.p99Ms, 1)} ms`,
  target: `≥ ${TARGET}×`,
  met: createRatio >= TARGET,
});

// --- Push latency, off then on ---------------------------------------------------------------------------
/** Runs push-latency.ts once and reads its loaded row: p50 and p99 in ms, and the samples. */
async function pushRun(
  metrics: boolean,
): Promise<{ p50: number; p99: number; p999: number; samples: number }> {
  const file = fileURLToPath(new URL('./push-latency.ts', import.meta.url));
  const args = [
    '--streams',
    String(PUSH_STREAMS),
    '--duration',
    String(PUSH_SECONDS),
    '--baseline-duration',
    '5',
  ];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', file, ...args, ...(metrics ? ['--metrics'] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  // 'exit', not 'close': a crashed run's own children (its server and stream holder) may keep the pipe open.
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`push-latency.ts exited with ${code}`);
  const row = output.split('\n').find((line) => line.startsWith(`| ${PUSH_STREAMS} open streams |`));
  const cells = row?.split('|').map((cell) => cell.trim());
  if (!cells) throw new Error(`push-latency.ts printed no row for ${PUSH_STREAMS} open streams`);
  const number = (cell: string | undefined) => Number.parseFloat(cell ?? '');
  return { samples: number(cells[3]), p50: number(cells[4]), p99: number(cells[5]), p999: number(cells[6]) };
}
const pushOff = await pushRun(false);
const pushOn = await pushRun(true);
const p99Ratio = pushOn.p99 / pushOff.p99;
const pushMet = p99Ratio <= 1 / TARGET || pushOn.p99 - pushOff.p99 <= 0.5;
console.log(
  `\nPush latency at ${PUSH_STREAMS} open streams, ${PUSH_SECONDS} s sampled each, metrics off then on`,
);
console.log('| metrics | samples | p50 ms | p99 ms | p99.9 ms |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, run] of [
  ['off (today)', pushOff],
  ['on, scraped every second', pushOn],
] as const) {
  console.log(`| ${name} | ${run.samples} | ${fmt(run.p50, 2)} | ${fmt(run.p99, 2)} | ${fmt(run.p999, 2)} |`);
}
console.log(
  `Push, metrics on / off: p50 ${fmt(pushOn.p50 / pushOff.p50, 2)}×, p99 ${fmt(p99Ratio, 2)}× (${fmt(pushOn.p99 - pushOff.p99, 2)} ms); target p99 ≤ ${fmt(1 / TARGET, 2)}× or within 0.5 ms → ${verdict(pushMet)}`,
);
reportTarget({
  measure: `notification → push p99 at ${PUSH_STREAMS} streams with metrics on vs off (same run)`,
  figure: `${fmt(p99Ratio, 2)}× (p99 ${fmt(pushOn.p99, 2)} ms, p50 ${fmt(pushOn.p50, 2)} ms)`,
  baseline: `metrics off: p99 ${fmt(pushOff.p99, 2)} ms, p50 ${fmt(pushOff.p50, 2)} ms`,
  target: `≤ ${fmt(1 / TARGET, 2)}× or + 0.5 ms`,
  met: pushMet,
});
