/**
 * Issue 37: `GET /api/exports/balance-transactions` of a 10k and a 1M ledger (seeded straight into a SQLite
 * file, `support/seed-ledger.ts`), each streamed whole through the real HTTP server in a process of its own
 * (a fresh one per size, so its memory high-water mark is this export's): rows per second from the request to
 * the last byte, and the server's peak resident memory (`VmHWM` of `/proc/<pid>/status`) before and after.
 * The baseline is the 10k export of the same run: an export streamed in constant memory peaks the same at 1M
 * as at 10k, while one built in memory would need about 100× the 10k file's size more.
 *
 * Target: the server's peak RSS at the end of the 1M export ≤ 1.1× its peak once a quarter of the rows had
 * arrived (the last 750k rows cost no memory), and every row arrives. Printed beside it: the 10k export's peak,
 * the baseline the issue names; V8 grows its heap to a plateau under the export's allocation rate (heap used
 * after a full GC stays about 25 MB), which a 10k export ends before reaching, so that ratio is not judged.
 * `BENCH_EXPORT_SIZES` (10000,1000000), `BENCH_EXPORT_ROUNDS` (1: one export per size, 1M takes seconds).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, startBenchServer, stopBenchServer } from './support/load.ts';
import { type SeededLedger, seedLedger } from './support/seed-ledger.ts';
import { reportTarget } from './support/targets.ts';

const SIZES = (process.env.BENCH_EXPORT_SIZES ?? '10000,1000000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_EXPORT_ROUNDS ?? 1);
const TARGET_RATIO = 1.1;
const label = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1_000}k`);
const folder = mkdtempSync(join(tmpdir(), 'servicepay-export-bench-'));

/** A process's memory in MiB from `/proc/<pid>/status`: `VmHWM` (peak resident) or `VmRSS` (now). */
function memoryMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${field}:`));
  return Number(line?.match(/(\d+) kB/)?.[1] ?? Number.NaN) / 1024;
}

/**
 * Downloads the export, counting its rows (CRLFs, the header's included) and bytes as they arrive, and calling
 * `atRows` with the rows so far after each chunk (to read the server's memory part way).
 */
async function download(
  url: string,
  key: string,
  atRows: (rows: number) => void,
): Promise<{ rows: number; bytes: number; seconds: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/api/exports/balance-transactions`, {
    headers: { authorization: `Bearer ${key}` },
  });
  if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}`);
  let lines = 0;
  let bytes = 0;
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const chunk = read.value;
    bytes += chunk.length;
    // The seeded rows hold no CR or LF in a cell: every CR is a row's end.
    for (let at = chunk.indexOf(13); at !== -1; at = chunk.indexOf(13, at + 1)) lines += 1;
    atRows(lines - 1);
  }
  return { rows: lines - 1, bytes, seconds: (performance.now() - started) / 1000 };
}

interface Measured {
  size: number;
  /** The server's peak RSS once a quarter of the rows had arrived (MiB). */
  quarterHwm: number;
  rowsPerSecond: number;
  mib: number;
  idleHwm: number;
  exportHwm: number;
  rssAfter: number;
}

const measured: Measured[] = [];
try {
  const seeded: SeededLedger[] = [];
  for (const size of SIZES) {
    const started = performance.now();
    seeded.push(await seedLedger(join(folder, `ledger-${label(size)}.db`), size));
    console.log(`seeded ${label(size)} ledger entries in ${fmt((performance.now() - started) / 1000, 1)} s`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const ledger of seeded) {
      const server = await startBenchServer('servicepay', ['--db', ledger.dbPath]);
      const pid = server.child.pid as number;
      try {
        // Warm: the route, the statements, the CSV writer, on the last ten minutes (about 200 rows).
        const recent = encodeURIComponent(new Date(Date.now() - 600_000).toISOString());
        const warm = await fetch(`${server.url}/api/exports/balance-transactions?createdFrom=${recent}`, {
          headers: { authorization: `Bearer ${ledger.secretKey}` },
        });
        await warm.arrayBuffer();
        const idleHwm = memoryMiB(pid, 'VmHWM');
        let quarterHwm = Number.NaN;
        const got = await download(server.url, ledger.secretKey, (rows) => {
          if (Number.isNaN(quarterHwm) && rows >= ledger.entries / 4) quarterHwm = memoryMiB(pid, 'VmHWM');
        });
        if (got.rows !== ledger.entries) throw new Error(`${got.rows} rows of ${ledger.entries} arrived`);
        measured.push({
          size: ledger.entries,
          quarterHwm,
          rowsPerSecond: got.rows / got.seconds,
          mib: got.bytes / 2 ** 20,
          idleHwm,
          exportHwm: memoryMiB(pid, 'VmHWM'),
          rssAfter: memoryMiB(pid, 'VmRSS'),
        });
      } finally {
        await stopBenchServer(server);
      }
    }
  }

  console.log('\nGET /api/exports/balance-transactions, whole ledger, one client, server in its own process');
  console.log(
    '| rows | CSV MiB | rows/s | server peak RSS (MiB): before | at ¼ of the rows | at the end | RSS after (MiB) |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of measured)
    console.log(
      `| ${label(row.size)} | ${fmt(row.mib, 1)} | ${Math.round(row.rowsPerSecond).toLocaleString('en')} | ${fmt(row.idleHwm)} | ${fmt(row.quarterHwm)} | ${fmt(row.exportHwm)} | ${fmt(row.rssAfter)} |`,
    );
  const small = measured.filter((row) => row.size === Math.min(...SIZES));
  const large = measured.filter((row) => row.size === Math.max(...SIZES));
  const peak = (rows: Measured[]) => Math.max(...rows.map((row) => row.exportHwm));
  const rate = (rows: Measured[]) => Math.min(...rows.map((row) => row.rowsPerSecond));
  const ratio = peak(large) / peak(small);
  // "Constant": the last three quarters of the largest export add nothing to the server's peak. (V8 grows its
  // heap to a plateau under an export's allocation rate, some 100k rows in, whatever the size after that; the
  // 10k export ends before it gets there, so the 1M/10k ratio is printed beside it, not judged.)
  const quarter = Math.max(...large.map((row) => row.quarterHwm));
  const tail = peak(large) / quarter;
  reportTarget({
    measure: `export of ${label(Math.max(...SIZES))} balance transactions: server peak RSS at the end vs at ¼ of the rows`,
    figure: `${fmt(tail, 2)}× (${fmt(peak(large))} MiB; ${Math.round(rate(large)).toLocaleString('en')} rows/s)`,
    baseline: `at ¼: ${fmt(quarter)} MiB; the ${label(Math.min(...SIZES))} export: ${fmt(peak(small))} MiB (${label(Math.max(...SIZES))}/${label(Math.min(...SIZES))} ${fmt(ratio, 2)}×), ${Math.round(rate(small)).toLocaleString('en')} rows/s`,
    target: `≤ ${TARGET_RATIO}× (constant memory)`,
    met: tail <= TARGET_RATIO,
  });
} finally {
  rmSync(folder, { recursive: true, force: true });
}
