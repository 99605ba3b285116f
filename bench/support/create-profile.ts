/**
 * Where a SQLite keyed create's CPU goes (issue 38): the servicepay bench server under `node --cpu-prof`, loaded by
 * autocannon in its own process (the SDK's keyed create, 50 connections), its profile summarised by self time
 * per area of the create path; then a second run with `count-statements.mjs` preloaded for the statements per
 * create. CPU per create from /proc around each run. Not a benchmark of `npm run bench` (it lives in support/).
 *
 *   node --import tsx bench/support/create-profile.ts [--seconds 5] [--keep DIR]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, fmt, machineLoad, runLoad, startBenchServer, stopBenchServer } from './load.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, keep: { type: 'string' } },
});
const durationMs = Number(values.seconds) * 1000;

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; endTime: number };

/**
 * Areas, the most specific first: a sample goes to the first area (in this order) that any frame of its stack
 * belongs to, so a SQLite statement run by the request log counts as the request log, not as SQLite.
 */
const AREAS: Array<[string, RegExp]> = [
  [
    'idempotency record (claim, seal, lock)',
    /middleware\/idempotency|unsettled-marks|db\/idempotency-keys|secret-box/,
  ],
  ['request log insert', /middleware\/request-log|db\/request-log/],
  ['rate limiter', /middleware\/rate-limit|sliding-window-limiter|refusal-memo/],
  ['metrics hooks', /src\/metrics\//],
  ['key lookup and hashing (authenticate)', /middleware\/authenticate|db\/api-keys/],
  ['zod parse (body, answer)', /node_modules\/zod|sdk\/src\/protocol/],
  ['envelope / JSON text', /middleware\/envelope/],
  [
    'session insert and virtual account (service, its statements)',
    /src\/sessions\/|db\/sessions|db\/virtual-accounts|db\/events/,
  ],
  [
    'write queue, transaction, SQLite',
    /db\/write-queue|db\/sqlite-runner|db\/table|db\/sql\.ts|better-sqlite3/,
  ],
  [
    'operations table, request scope, context',
    /routes\/|middleware\/|internal\/request-scope|api-server|message-classes/,
  ],
  [
    'express, body parsing',
    /node_modules\/(express|router|body-parser|raw-body|iconv-lite|type-is|content-type|finalhandler|send|qs|on-finished)/,
  ],
  ['node http, sockets', /node:_http|node:net|node:internal\/(streams|stream_base|http)|node:stream|_http_/],
];

/**
 * Self time per area over the profile's last `windowMs` (the measured run: the server is stopped right after it,
 * so its start-up and warm-up stay out), with each area's top functions by self time.
 */
function summarise(file: string, windowMs: number) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const areaOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = areaOf.get(id);
    if (known) return known;
    const leaf = byId.get(id)?.callFrame.functionName ?? '';
    let best = AREAS.length;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)?.callFrame.url ?? '';
      const index = AREAS.findIndex(([, pattern]) => pattern.test(url));
      if (index !== -1 && index < best) best = index;
    }
    const area =
      best < AREAS.length
        ? (AREAS[best]?.[0] as string)
        : leaf === '(idle)' || leaf === '(garbage collector)' || leaf === '(program)'
          ? leaf
          : 'other (node internals, microtasks, timers)';
    areaOf.set(id, area);
    return area;
  };
  const nameOf = (id: number) => {
    const frame = byId.get(id)?.callFrame;
    const file = frame?.url.split('/').slice(-2).join('/') ?? '';
    return `${frame?.functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
  };
  const self = new Map<string, number>();
  const functions = new Map<string, Map<string, number>>();
  // Sample times, from the end back: keep those within the window.
  const times: number[] = [];
  let at = profile.endTime;
  for (let i = profile.samples.length - 1; i >= 0; i--) {
    times[i] = at;
    at -= profile.timeDeltas[i] ?? 0;
  }
  const from = profile.endTime - windowMs * 1000;
  profile.samples.forEach((id, index) => {
    if ((times[index] ?? 0) < from) return;
    const micros = profile.timeDeltas[index] ?? 0;
    const area = classify(id);
    self.set(area, (self.get(area) ?? 0) + micros);
    const inArea = functions.get(area) ?? new Map<string, number>();
    inArea.set(nameOf(id), (inArea.get(nameOf(id)) ?? 0) + micros);
    functions.set(area, inArea);
  });
  return { rows: [...self].sort((a, b) => b[1] - a[1]), functions };
}

const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'servicepay-create-profile-'));
const load = (url: string, token: string) =>
  runLoad({
    url,
    method: 'POST',
    path: '/api/widget/sessions',
    connections: 50,
    durationMs,
    warmupMs: 1000,
    token,
    body: 'session',
    idempotencyKey: 'sdk',
    expectStatus: 201,
  });

// 1. The profile.
const profiled = await startBenchServer('servicepay', [], ['--cpu-prof', '--cpu-prof-dir', dir]);
const before = cpuSeconds(profiled.child);
const result = await load(profiled.url, profiled.secretKey as string);
const cpuPerCreate = ((cpuSeconds(profiled.child) - before) / result.allResponses) * 1e6;
await stopBenchServer(profiled);
const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const { rows, functions } = summarise(join(dir, file), durationMs);
const busy = rows.filter(([area]) => area !== '(idle)').reduce((sum, [, micros]) => sum + micros, 0);

// 2. Statements per create (a run of its own: the counting wrapper costs CPU).
const countsFile = join(dir, 'statements.json');
process.env.COUNT_STATEMENTS_FILE = countsFile;
const preload = fileURLToPath(new URL('./count-statements.mjs', import.meta.url));
const counted = await startBenchServer('servicepay', [], ['--import', preload]);
const countedResult = await load(counted.url, counted.secretKey as string);
await stopBenchServer(counted);
const counts = JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>;
const creates = countedResult.allResponses;

console.log(
  `SQLite keyed create under --cpu-prof, autocannon -c 50 in its own process, ${durationMs / 1000} s + 1 s warm-up, ${new Date().toISOString()}, ${machineLoad()} (loaded machine: read shares and µs, not rates)`,
);
console.log(
  `${fmt(result.perSecond, 0)} creates/s; server CPU ${fmt(cpuPerCreate, 0)} µs per create (/proc, profiler on). ` +
    'Profile time is time on the main thread, so a COMMIT waiting on its fsync counts there (as write queue) but not in /proc CPU.',
);
console.log(
  '| area (self time, most specific frame on the stack) | share of busy time | main-thread µs per create | its top functions (self) |',
);
console.log('|---|---:|---:|---|');
for (const [area, micros] of rows) {
  if (area === '(idle)') continue;
  const top = [...(functions.get(area) ?? [])]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name, self]) => `${name} ${fmt((self / micros) * 100, 0)}%`)
    .join('; ');
  console.log(
    `| ${area} | ${fmt((micros / busy) * 100, 1)}% | ${fmt(micros / result.requests, 0)} | ${top} |`,
  );
}
const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
console.log(
  `\nStatements per create (better-sqlite3 calls and execs, ${creates} answers): ${fmt(total / creates, 2)}`,
);
for (const [sql, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) {
  if (n / creates < 0.01) continue;
  console.log(`  ${fmt(n / creates, 2)}  ${sql.replace(/\s+/g, ' ').slice(0, 110)}`);
}
if (!values.keep) rmSync(dir, { recursive: true, force: true });
