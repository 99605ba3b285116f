/**
 * ServicePay on PostgreSQL (issue 13) against ServicePay on SQLite, measured in the same run:
 *
 * 1. Session create with an `Idempotency-Key` (as the SDK sends it), autocannon in its own process: SQLite one
 *    instance (the baseline), PostgreSQL one instance, PostgreSQL two instances (two server processes on one
 *    database, each driven by its own autocannon process with half the connections). Alternated, round after
 *    round, so drift on the machine falls on every kind.
 * 2. Bank notification → `successful` on the session's SSE stream: SQLite one instance (the baseline),
 *    PostgreSQL one instance (stream and notification on it), PostgreSQL two instances (the stream open on one
 *    and the notification sent to the other: the push crosses instances through LISTEN/NOTIFY). Sequential
 *    samples (one payment at a time), alternated.
 *
 * Durability, printed with the figures: SQLite in WAL with synchronous=FULL (a commit fsyncs); PostgreSQL
 * started by this file with fsync=on, synchronous_commit=on, full_page_writes=on (its defaults; the test
 * harness turns them off, a benchmark must not). Both data directories are on the same disk (the temporary
 * folder).
 *
 * `BENCH_CONNECTIONS` (50), `BENCH_DURATION_MS` per run (5000), `BENCH_ROUNDS` (2), `BENCH_PAYMENTS` per kind
 * per round (500: with 1,000 samples a path's p99 is its tenth-worst, not its third-worst as with 300). `BENCH_PROFILE=1` adds where a create's time goes (support/postgres-profile.ts): one more
 * create run on SQLite and on PostgreSQL, the CPU each side spent per create, `pg_stat_statements` per create
 * and per payment, and the PostgreSQL server's CPU profile (`--cpu-prof`) summarised by self time.
 *
 * Targets (issue 25), each printed beside its baseline and whether it holds: PostgreSQL one instance ≥ 0.5× SQLite's
 * creates/s; two instances ≥ 1.0× one instance; a create's p99 ≤ 50 ms at 50 connections; notification → SSE p99
 * ≤ 1.5× SQLite's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, randomBase62 } from '../reference-server/src/internal/random.ts';
import { signPayload } from '../reference-server/src/internal/signature.ts';
import { startDurablePostgres } from './support/durable-postgres.ts';
import {
  type BenchServer,
  combine,
  cpuSeconds,
  fmt,
  type LoadOptions,
  type LoadResult,
  machineLoad,
  runLoad,
  startBenchServer,
  stopBenchServer,
} from './support/load.ts';
import { postgresCpuSeconds, printStatements, resetStatements } from './support/postgres-profile.ts';
import { reportTarget } from './support/targets.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 500);
const WARMUP_MS = 1000;
const PROFILE = process.env.BENCH_PROFILE === '1';

// One bank secret for every server process: a notification signed here is accepted by any instance.
const bankSecret = randomBase62(40);
process.env.SERVICEPAY_BANK_SECRET = bankSecret;

const postgres = await startDurablePostgres(PROFILE);
const servers: BenchServer[] = [];
const profileDir = mkdtempSync(join(tmpdir(), 'servicepay-bench-profile-'));
const start = async (args: string[], nodeArgs: string[] = []) => {
  const server = await startBenchServer('servicepay', args, nodeArgs);
  servers.push(server);
  return server;
};

type Kind = 'sqlite' | 'pg1' | 'pg2';
const results: Record<Kind, LoadResult[]> = { sqlite: [], pg1: [], pg2: [] };
/** CPU seconds of each kind's runs (/proc, warm-up included): server process(es), PostgreSQL's; every answer. */
const cpu: Record<Kind, { server: number; database: number; answers: number }> = {
  sqlite: { server: 0, database: 0, answers: 0 },
  pg1: { server: 0, database: 0, answers: 0 },
  pg2: { server: 0, database: 0, answers: 0 },
};
type PushPath = 'sqlite' | 'pg1' | 'pg2';
const push: Record<PushPath, number[]> = { sqlite: [], pg1: [], pg2: [] };
const createOn = (server: BenchServer, token: string, connections: number): LoadOptions => ({
  url: server.url,
  method: 'POST',
  path: '/api/widget/sessions',
  connections,
  durationMs: DURATION_MS,
  warmupMs: WARMUP_MS,
  token,
  body: 'session',
  idempotencyKey: 'sdk',
  expectStatus: 201,
});

/** Two generator processes at once, one per instance: rates add up, latencies pool. */
function concurrent(parts: LoadResult[]): LoadResult {
  const merged = combine(parts);
  const seconds = Math.max(...parts.map((part) => part.seconds));
  return { ...merged, seconds, perSecond: merged.expected / seconds };
}

async function json(method: string, url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as { data: Record<string, unknown> };
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}`);
  return parsed.data;
}

/** One payment: session created and bootstrapped on `streamOn`, stream opened there, bank notified at `payOn`. */
async function onePayment(streamOn: BenchServer, payOn: BenchServer, secretKey: string): Promise<number> {
  const created = await json(
    'POST',
    `${streamOn.url}/api/widget/sessions`,
    { amount: 500000, currency: 'NGN', payer: { name: 'Ada Lovelace', email: 'ada@example.com' } },
    { authorization: `Bearer ${secretKey}` },
  );
  const boot = (await json('POST', `${streamOn.url}/api/widget/bootstrap`, {
    clientSecret: created.clientSecret,
  })) as {
    token: string;
    session: { id: string; amount: number };
    virtualAccount: { accountNumber: string };
  };
  const base = new URL(streamOn.url);
  let sentAt = 0;
  return new Promise<number>((resolve, reject) => {
    let first = true;
    const stream = request({
      host: base.hostname,
      port: base.port,
      path: `/api/widget/sessions/${boot.session.id}/events`,
      headers: { authorization: `Bearer ${boot.token}`, accept: 'text/event-stream' },
      agent: false,
    });
    stream.on('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now();
        if (first && chunk.includes('data: ')) {
          first = false;
          const raw = JSON.stringify({
            id: newId('ntf'),
            type: 'transfer.received',
            occurredAt: new Date().toISOString(),
            transfer: {
              id: newId('trf'),
              accountNumber: boot.virtualAccount.accountNumber,
              amount: boot.session.amount,
              currency: 'NGN',
              outcome: 'credited',
              returnReason: null,
            },
          });
          const signature = signPayload(raw, [bankSecret], Math.floor(Date.now() / 1000));
          sentAt = performance.now();
          fetch(`${payOn.url}/bank/notifications`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-bank-signature': signature },
            body: raw,
          }).then((answer) => {
            if (answer.status !== 200) reject(new Error(`bank notification answered ${answer.status}`));
            return answer.arrayBuffer();
          }, reject);
        } else if (chunk.includes('"status":"successful"')) {
          stream.destroy();
          resolve(at - sentAt);
        }
      });
      res.on('error', () => undefined);
    });
    stream.on('error', reject);
    stream.setNoDelay(true);
    stream.end();
  });
}

const startedAt = Date.now();
try {
  const sqlite = await start([]);
  const pgA = await start(
    ['--database-url', postgres.url],
    PROFILE ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  );
  const pgB = await start(['--database-url', postgres.url, '--existing']);
  const sqliteKey = sqlite.secretKey as string;
  const pgKey = pgA.secretKey as string;

  const order: Kind[] = ['sqlite', 'pg1', 'pg2'];
  const serversOf: Record<Kind, BenchServer[]> = { sqlite: [sqlite], pg1: [pgA], pg2: [pgA, pgB] };
  const serverCpu = (kind: Kind) =>
    serversOf[kind].reduce((sum, server) => sum + cpuSeconds(server.child), 0);
  const databaseCpu = (kind: Kind) => (kind === 'sqlite' ? 0 : postgresCpuSeconds(postgres.dataDir));
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 === 0 ? order : [...order].reverse()) {
      const [serverBefore, databaseBefore] = [serverCpu(kind), databaseCpu(kind)];
      let result: LoadResult;
      if (kind === 'sqlite') result = await runLoad(createOn(sqlite, sqliteKey, CONNECTIONS));
      else if (kind === 'pg1') result = await runLoad(createOn(pgA, pgKey, CONNECTIONS));
      else {
        const half = Math.ceil(CONNECTIONS / 2);
        const parts = await Promise.all([
          runLoad(createOn(pgA, pgKey, half)),
          runLoad(createOn(pgB, pgKey, CONNECTIONS - half)),
        ]);
        result = concurrent(parts);
      }
      cpu[kind].server += serverCpu(kind) - serverBefore;
      cpu[kind].database += databaseCpu(kind) - databaseBefore;
      cpu[kind].answers += result.allResponses;
      results[kind].push(result);
    }
    const paths: PushPath[] = ['sqlite', 'pg1', 'pg2'];
    for (const path of round % 2 === 0 ? paths : [...paths].reverse()) {
      for (let i = 0; i < PAYMENTS; i++) {
        if (path === 'sqlite') push.sqlite.push(await onePayment(sqlite, sqlite, sqliteKey));
        else if (path === 'pg1') push.pg1.push(await onePayment(pgA, pgA, pgKey));
        else push.pg2.push(await onePayment(pgA, pgB, pgKey));
      }
    }
  }
  if (PROFILE) {
    // CPU per create, each side read from /proc around one run: CPU time holds on a shared machine where
    // wall time does not. No warm-up window, so every create the run made is counted.
    const perCreate = async (server: BenchServer, key: string, withPostgres: boolean) => {
      const serverBefore = cpuSeconds(server.child);
      const postgresBefore = withPostgres ? postgresCpuSeconds(postgres.dataDir) : 0;
      const result = await runLoad({ ...createOn(server, key, CONNECTIONS), warmupMs: 0 });
      const serverMs = ((cpuSeconds(server.child) - serverBefore) * 1000) / result.requests;
      const postgresMs = withPostgres
        ? ((postgresCpuSeconds(postgres.dataDir) - postgresBefore) * 1000) / result.requests
        : 0;
      return { result, serverMs, postgresMs };
    };
    const onSqlite = await perCreate(sqlite, sqliteKey, false);
    await resetStatements(postgres.url);
    const onPostgres = await perCreate(pgA, pgKey, true);
    console.log('\nWhere a create goes (BENCH_PROFILE=1): CPU per create, from /proc, one run each');
    console.log('| server | creates/s | server process ms | PostgreSQL processes ms | total ms |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, row] of [
      ['SQLite, 1 instance', onSqlite],
      ['PostgreSQL, 1 instance', onPostgres],
    ] as const) {
      console.log(
        `| ${name} | ${fmt(row.result.perSecond, 0)} | ${fmt(row.serverMs, 3)} | ${fmt(row.postgresMs, 3)} | ${fmt(row.serverMs + row.postgresMs, 3)} |`,
      );
    }
    await printStatements(postgres.url, onPostgres.result.requests);
    // A whole payment's statements (create, bootstrap, stream, bank notification), one payment at a time.
    await resetStatements(postgres.url);
    for (let i = 0; i < 50; i++) await onePayment(pgA, pgA, pgKey);
    await printStatements(postgres.url, 50, 30, 'payment');
  }
} finally {
  for (const server of servers) await stopBenchServer(server);
  postgres.stop();
}
if (PROFILE) {
  for (const file of readdirSync(profileDir)) {
    console.log(
      `\nPostgreSQL server process (instance A), CPU profile over its whole life, self time (${file}):`,
    );
    console.log(
      execFileSync(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, 'support/push-profile.ts'),
          join(profileDir, file),
          '--top',
          '20',
        ],
        { encoding: 'utf8' },
      ),
    );
  }
}
rmSync(profileDir, { recursive: true, force: true });

const all = { sqlite: combine(results.sqlite), pg1: combine(results.pg1), pg2: combine(results.pg2) };
const perSecond = (result: LoadResult) => `${Math.round(result.perSecond).toLocaleString('en')}/s`;
console.log(
  '\nDurability: SQLite WAL, synchronous=FULL (fsync per commit); PostgreSQL 15 fsync=on, synchronous_commit=on, ' +
    'full_page_writes=on; both on the same disk (temporary folder). Two cores shared by servers, PostgreSQL and generators.',
);
console.log(
  `\nSession create with Idempotency-Key, autocannon -c ${CONNECTIONS} in its own process(es), ${ROUNDS} × ${DURATION_MS / 1000} s per kind, alternated`,
);
console.log(
  `| server | answers/s | p50 ms | p99 ms | p99.9 ms | max ms | errors | vs SQLite | server CPU µs/create | PostgreSQL CPU µs/create | total CPU vs SQLite |`,
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
/** CPU per create (µs), from /proc: the server process(es), the database's processes, and both. */
const cpuPerCreate = (kind: Kind) => {
  const server = (cpu[kind].server / cpu[kind].answers) * 1e6;
  const database = (cpu[kind].database / cpu[kind].answers) * 1e6;
  return { server, database, total: server + database };
};
const labels: Record<Kind, string> = {
  sqlite: 'SQLite, 1 instance (baseline)',
  pg1: 'PostgreSQL, 1 instance',
  pg2: `PostgreSQL, 2 instances (one database; 2 generators × ${Math.ceil(CONNECTIONS / 2)} connections)`,
};
for (const kind of ['sqlite', 'pg1', 'pg2'] as const) {
  const r = all[kind];
  console.log(
    `| ${labels[kind]} | ${fmt(r.perSecond, 0)} | ${fmt(r.p50Ms, 2)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.p999Ms, 2)} | ${fmt(r.maxMs, 2)} | ${r.errors} | ${fmt(r.perSecond / all.sqlite.perSecond, 2)}× | ${fmt(cpuPerCreate(kind).server, 0)} | ${kind === 'sqlite' ? '(in process)' : fmt(cpuPerCreate(kind).database, 0)} | ${fmt(cpuPerCreate(kind).total / cpuPerCreate('sqlite').total, 2)}× |`,
  );
}
console.log(
  `(CPU per create: utime+stime from /proc over every answer of the kind's runs, warm-up included; PostgreSQL's is the postmaster's reaped children plus its live backends; ${machineLoad()} at the end of the run, so read CPU, not rates.)`,
);
for (const [name, result] of Object.entries(all)) {
  if (result.errors > 0) console.log(`${name}: unexpected answers ${JSON.stringify(result.statuses)}`);
}

const sorted = (list: number[]) => [...list].sort((a, b) => a - b);
const percentile = (list: number[], p: number) =>
  list[Math.min(list.length - 1, Math.ceil((p / 100) * list.length) - 1)] ?? Number.NaN;
const pushRows: Record<PushPath, number[]> = {
  sqlite: sorted(push.sqlite),
  pg1: sorted(push.pg1),
  pg2: sorted(push.pg2),
};
const pushLabels: Record<PushPath, string> = {
  sqlite: 'SQLite, 1 instance: stream and notification on it (baseline)',
  pg1: 'PostgreSQL, 1 instance: stream and notification on it',
  pg2: 'PostgreSQL, 2 instances: stream on A, notification to B (LISTEN/NOTIFY)',
};
const p99 = (path: PushPath) => percentile(pushRows[path], 99);
console.log(
  `\nBank notification → \`successful\` on the SSE stream, one payment at a time, ${ROUNDS} × ${PAYMENTS} per path, alternated`,
);
console.log('| path | samples | p50 ms | p99 ms | p99.9 ms | max ms | p99 vs SQLite |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const path of ['sqlite', 'pg1', 'pg2'] as const) {
  const list = pushRows[path];
  console.log(
    `| ${pushLabels[path]} | ${list.length} | ${fmt(percentile(list, 50), 2)} | ${fmt(p99(path), 2)} | ${fmt(percentile(list, 99.9), 2)} | ${fmt(list.at(-1) ?? Number.NaN, 2)} | ${fmt(p99(path) / p99('sqlite'), 2)}× |`,
  );
}
console.log(
  `(p99.9 of ${pushRows.pg2.length} samples is within the last few samples: read it as near-max.) ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`,
);

// The four targets of issue 25, each beside its baseline from this same run.
const createRatio = (kind: 'pg1' | 'pg2') => all[kind].perSecond / all.sqlite.perSecond;
const describeCreate = (kind: Kind) => {
  const r = all[kind];
  return `${perSecond(r)}, p50 ${fmt(r.p50Ms, 1)} / p99 ${fmt(r.p99Ms, 1)} / p99.9 ${fmt(r.p999Ms, 1)} / max ${fmt(r.maxMs, 1)} ms, ${r.errors} errors`;
};
const pgOne = createRatio('pg1');
reportTarget({
  measure: 'session create, Idempotency-Key: PostgreSQL 1 instance vs SQLite (fsync on both sides)',
  figure: `${fmt(pgOne, 2)}× (${describeCreate('pg1')})`,
  baseline: `SQLite 1 instance ${describeCreate('sqlite')}`,
  target: '≥ 0.5×',
  met: pgOne >= 0.5,
});
reportTarget({
  measure: 'CPU per create (/proc, µs): PostgreSQL 1 instance, server + database, vs SQLite',
  figure: `${fmt(cpuPerCreate('pg1').total, 0)} µs (server ${fmt(cpuPerCreate('pg1').server, 0)} + PostgreSQL ${fmt(cpuPerCreate('pg1').database, 0)}) = ${fmt(cpuPerCreate('pg1').total / cpuPerCreate('sqlite').total, 2)}×; 2 instances ${fmt(cpuPerCreate('pg2').server, 0)} + ${fmt(cpuPerCreate('pg2').database, 0)} µs; ${machineLoad()}`,
  baseline: `SQLite 1 instance ${fmt(cpuPerCreate('sqlite').server, 0)} µs (server process, SQLite in it)`,
  target: 'no target (measured: the next regression is this number)',
  met: true,
  verdict: 'measured',
});
const scaleOut = all.pg2.perSecond / all.pg1.perSecond;
reportTarget({
  measure: 'session create, Idempotency-Key: PostgreSQL 2 instances vs 1 instance (one database)',
  figure: `${fmt(scaleOut, 2)}× (${describeCreate('pg2')}; ${fmt(createRatio('pg2'), 2)}× SQLite)`,
  baseline: `PostgreSQL 1 instance ${describeCreate('pg1')}`,
  target: '≥ 1.0×',
  met: scaleOut >= 1,
});
for (const kind of ['pg1', 'pg2'] as const) {
  reportTarget({
    measure: `session create p99 at ${CONNECTIONS} connections, ${labels[kind]}`,
    figure: `p99 ${fmt(all[kind].p99Ms, 1)} ms`,
    baseline: `SQLite 1 instance p99 ${fmt(all.sqlite.p99Ms, 1)} ms`,
    target: '≤ 50 ms',
    met: all[kind].p99Ms <= 50,
  });
}
const base = pushRows.sqlite;
for (const path of ['pg1', 'pg2'] as const) {
  const list = pushRows[path];
  const ratio = p99(path) / p99('sqlite');
  reportTarget({
    measure: `bank notification → SSE client p99, ${pushLabels[path]}`,
    figure: `${fmt(ratio, 2)}× SQLite's: p50 ${fmt(percentile(list, 50), 2)} / p99 ${fmt(p99(path), 2)} / p99.9 ${fmt(percentile(list, 99.9), 2)} / max ${fmt(list.at(-1) ?? Number.NaN, 2)} ms (${list.length})`,
    baseline: `SQLite 1 instance: p50 ${fmt(percentile(base, 50), 2)} / p99 ${fmt(p99('sqlite'), 2)} / max ${fmt(base.at(-1) ?? Number.NaN, 2)} ms`,
    target: '≤ 1.5×',
    met: ratio <= 1.5,
  });
}
