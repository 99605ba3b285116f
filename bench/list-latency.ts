/**
 * The session table at 10k, 100k and 1M sessions (seeded in one SQL transaction, `support/seed-sessions.ts`):
 * how long `GET /api/widget/sessions` takes for page one, a mid-list cursor and each filter, and how fast
 * sessions are created into the 1M table against the 10k one. Each size is a database file of its own served by
 * its own server process; the load generator runs in another process (`support/load-generator.ts`), and the
 * sizes are interleaved query by query, create run by create run.
 *
 * Targets (issue 12): every list query ≤ 2 ms (median, one client at a time) and flat with table size: the 1M
 * median at most 0.5 ms above the 10k one (a ratio of sub-millisecond medians is mostly noise on a shared
 * machine; the old statements grew by 100+ ms from 10k to 1M, which this tells apart at once); create at 1M ≥ 0.9× create at 10k (fsynced, `Idempotency-Key`, autocannon -c 50).
 * Beside each 1M figure: the list statement as it was before migration 006 (one catch-all statement), run on the
 * same file by this process, SQL only.
 *
 * `BENCH_LIST_SIZES` (10000,100000,1000000), `BENCH_LIST_MS` per query and size (1000),
 * `BENCH_DURATION_MS` per create run (10000), `BENCH_ROUNDS` (3). Three 10 s runs per size, as the issue's own
 * measurements: two 4 s runs gave 0.84× and 0.93× the same evening on one machine, and 0.90× twice with the
 * longer runs, so a 10 % target could not be read from the short ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from '../reference-server/src/internal/sqlite-driver.ts';
import {
  type BenchServer,
  combine,
  fmt,
  type LoadResult,
  runLoad,
  startBenchServer,
  stopBenchServer,
  verdict,
} from './support/load.ts';
import { type SeededFile, seedSessions } from './support/seed-sessions.ts';
import { reportTarget } from './support/targets.ts';

const SIZES = (process.env.BENCH_LIST_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const LIST_MS = Number(process.env.BENCH_LIST_MS ?? 1000);
const CREATE_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LIST_TARGET_MS = 2;
/** How much slower (ms) the largest table's median may be than the smallest's and still count as flat. */
const FLAT_TARGET_MS = 0.5;
const CREATE_TARGET = 0.9;

const folder = mkdtempSync(join(tmpdir(), 'servicepay-list-bench-'));
const label = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1_000}k`);

interface Table {
  size: number;
  seeded: SeededFile;
  server?: BenchServer;
  /** A session of the listed business and environment halfway down its list, and its reference. */
  middle: { id: string; reference: string; seq: number };
}

const tables: Table[] = [];
try {
  for (const size of SIZES) {
    const started = performance.now();
    const seeded = await seedSessions(join(folder, `sessions-${label(size)}.db`), size);
    const db = new Database(seeded.dbPath, { readonly: true });
    const owned = db
      .prepare("SELECT COUNT(*) FROM sessions WHERE business_id = ? AND environment = 'test'")
      .pluck()
      .get(seeded.businessId) as number;
    const middle = db
      .prepare(
        "SELECT id, reference, seq FROM sessions WHERE business_id = ? AND environment = 'test' ORDER BY seq DESC LIMIT 1 OFFSET ?",
      )
      .get(seeded.businessId, Math.floor(owned / 2)) as Table['middle'];
    db.close();
    console.log(
      `seeded ${label(size)} sessions (${owned} of the listed business in test) in ${fmt((performance.now() - started) / 1000, 1)} s`,
    );
    tables.push({ size, seeded, middle });
  }
  for (const table of tables)
    table.server = await startBenchServer('servicepay', ['--db', table.seeded.dbPath]);

  const queries: Array<{ name: string; path: (table: Table) => string; old?: Record<string, unknown> }> = [
    { name: 'page one', path: () => '' },
    { name: 'mid-list cursor', path: (t) => `?startingAfter=${t.middle.id}` },
    { name: '?environment=test', path: () => '?environment=test' },
    { name: '?status=successful (60%)', path: () => '?status=successful' },
    { name: '?status=mismatch (0.3%)', path: () => '?status=mismatch' },
    { name: '?status=pending (newest only)', path: () => '?status=pending' },
    { name: '?status=mismatch + mid cursor', path: (t) => `?status=mismatch&startingAfter=${t.middle.id}` },
    { name: '?reference= (mid-list)', path: (t) => `?reference=${t.middle.reference}` },
    { name: '?reference= + ?status=', path: (t) => `?reference=${t.middle.reference}&status=successful` },
  ];
  const listed = new Map<string, LoadResult>();
  for (const query of queries) {
    for (const table of tables) {
      if (!table.server) continue;
      listed.set(
        `${query.name}@${table.size}`,
        await runLoad({
          url: table.server.url,
          method: 'GET',
          path: `/api/widget/sessions${query.path(table)}`,
          connections: 1,
          durationMs: LIST_MS,
          warmupMs: 300,
          token: table.seeded.secretKey,
          expectStatus: 200,
        }),
      );
    }
  }

  // The statement the list ran before migration 006, on the largest file, for the same queries (SQL only).
  const largest = tables.at(-1) as Table;
  const oldDb = new Database(largest.seeded.dbPath, { readonly: true });
  const oldStatement = oldDb.prepare(
    `SELECT * FROM sessions
     WHERE business_id = @businessId AND environment = @environment AND seq < @beforeSeq
       AND (@status IS NULL OR status = @status) AND (@reference IS NULL OR reference = @reference)
     ORDER BY seq DESC LIMIT @limit`,
  );
  const oldMs = (query: string): number => {
    const params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
    const cursor = params.get('startingAfter');
    const bound = {
      businessId: largest.seeded.businessId,
      environment: 'test',
      beforeSeq: cursor ? largest.middle.seq : Number.MAX_SAFE_INTEGER,
      status: params.get('status'),
      reference: params.get('reference'),
      limit: 21,
    };
    const times: number[] = [];
    const until = performance.now() + 300;
    while (performance.now() < until || times.length < 3) {
      const started = performance.now();
      oldStatement.all(bound);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)] ?? Number.NaN;
  };

  console.log(
    `\nGET /api/widget/sessions (limit 20), one client at a time, ${LIST_MS / 1000} s per query and size: median ms (p99 ms)`,
  );
  console.log(
    `| query | ${tables.map((t) => label(t.size)).join(' | ')} | ${label(largest.size)} − ${label(tables[0]?.size ?? 0)} ms | before 006, SQL only, ${label(largest.size)} | target ≤ ${LIST_TARGET_MS} ms, flat |`,
  );
  console.log(`|---|${tables.map(() => '---:|').join('')}---:|---:|---|`);
  let allMet = true;
  let worst = { name: '', atLargest: 0, atSmallest: 0 };
  let slowestBefore = { name: '', ms: 0 };
  for (const query of queries) {
    const results = tables.map((t) => listed.get(`${query.name}@${t.size}`) as LoadResult);
    const first = results[0] as LoadResult;
    const last = results.at(-1) as LoadResult;
    const growth = last.p50Ms - first.p50Ms;
    const met = results.every((r) => r.p50Ms <= LIST_TARGET_MS && r.errors === 0) && growth <= FLAT_TARGET_MS;
    allMet &&= met;
    const before = oldMs(query.path(largest));
    if (last.p50Ms > worst.atLargest) {
      worst = { name: query.name, atLargest: last.p50Ms, atSmallest: first.p50Ms };
    }
    if (before > slowestBefore.ms) slowestBefore = { name: query.name, ms: before };
    console.log(
      `| ${query.name} | ${results.map((r) => `${fmt(r.p50Ms, 2)} (${fmt(r.p99Ms, 2)})${r.errors ? ` ${r.errors} errors` : ''}`).join(' | ')} | ${growth >= 0 ? '+' : ''}${fmt(growth, 2)} | ${fmt(before, 2)} | ${verdict(met)} |`,
    );
  }
  oldDb.close();
  reportTarget({
    measure: `GET /api/widget/sessions at ${tables.map((t) => label(t.size)).join(', ')}: page one, mid cursor, each filter (${queries.length} queries)`,
    figure: `slowest median at ${label(largest.size)}: ${fmt(worst.atLargest, 2)} ms (${worst.name})`,
    baseline: `${label(tables[0]?.size ?? 0)}: ${fmt(worst.atSmallest, 2)} ms; the pre-006 statement at ${label(largest.size)}: up to ${fmt(slowestBefore.ms, 2)} ms (${slowestBefore.name})`,
    target: `≤ ${LIST_TARGET_MS} ms each, flat (≤ +${FLAT_TARGET_MS} ms)`,
    met: allMet,
  });
  console.log(
    `List: every query's median ≤ ${LIST_TARGET_MS} ms at every size, and flat (1M at most ${FLAT_TARGET_MS} ms above 10k) → ${verdict(allMet)}`,
  );

  // Creates into the smallest and the largest table, alternated.
  const small = tables[0] as Table;
  const creates: Record<'small' | 'large', LoadResult[]> = { small: [], large: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
    for (const which of order) {
      const table = which === 'small' ? small : largest;
      if (!table.server) continue;
      creates[which].push(
        await runLoad({
          url: table.server.url,
          method: 'POST',
          path: '/api/widget/sessions',
          connections: 50,
          durationMs: CREATE_MS,
          warmupMs: 1000,
          token: table.seeded.secretKey,
          body: 'session',
          idempotencyKey: 'sdk',
          expectStatus: 201,
        }),
      );
    }
  }
  const atSmall = combine(creates.small);
  const atLarge = combine(creates.large);
  console.log(
    `\nSession create with Idempotency-Key, fsynced, autocannon -c 50, ${ROUNDS} × ${CREATE_MS / 1000} s per size, alternated`,
  );
  console.log('| table | creates/s | p50 ms | p99 ms | p99.9 ms | max ms | errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [size, result] of [
    [small.size, atSmall],
    [largest.size, atLarge],
  ] as const) {
    console.log(
      `| ${label(size)} sessions (baseline: ${label(small.size)}) | ${fmt(result.perSecond, 0)} | ${fmt(result.p50Ms, 2)} | ${fmt(result.p99Ms, 2)} | ${fmt(result.p999Ms, 2)} | ${fmt(result.maxMs, 2)} | ${result.errors} |`,
    );
  }
  const ratio = atLarge.perSecond / atSmall.perSecond;
  console.log(
    `Create at ${label(largest.size)} vs at ${label(small.size)}: ${fmt(ratio, 2)}×; target ≥ ${CREATE_TARGET}× → ${verdict(ratio >= CREATE_TARGET)}`,
  );
  reportTarget({
    measure: `create at ${label(largest.size)} sessions vs at ${label(small.size)} (fsynced, Idempotency-Key, -c 50)`,
    figure: `${fmt(ratio, 2)}× (${Math.round(atLarge.perSecond).toLocaleString('en')}/s)`,
    baseline: `${label(small.size)}: ${Math.round(atSmall.perSecond).toLocaleString('en')}/s`,
    target: `≥ ${CREATE_TARGET}×`,
    met: ratio >= CREATE_TARGET,
  });
} finally {
  for (const table of tables) if (table.server) await stopBenchServer(table.server);
  rmSync(folder, { recursive: true, force: true });
}
