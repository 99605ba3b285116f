/**
 * Start-up time and memory of `servicepay-server start`, compiled (issue 28: `bin/servicepay-server.js` runs
 * `dist/cli.js`, built by tsup) beside the way it ran before (the TypeScript source through tsx's loader,
 * registered at every start), in the same run, alternated. Each start is a fresh process on a fresh SQLite
 * file: the time is from the spawn to the "listening" line on its stdout; the memory is its resident set
 * (`VmRSS`) and the peak (`VmHWM`) a second after that line, idle. Build first: `npm run build`.
 *
 * `BENCH_STARTS` (7) starts of each.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from './support/load.ts';
import { reportTarget } from './support/targets.ts';

const STARTS = Number(process.env.BENCH_STARTS ?? 7);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'reference-server/bin/servicepay-server.js');
if (!existsSync(join(root, 'reference-server/dist/cli.js'))) {
  console.error('server-start: build the server first (npm run build)');
  process.exit(1);
}
// How the bin started the service before issue 28: tsx's loader registered, then the source imported.
const FROM_SOURCE = `import { register } from 'tsx/esm/api'; register();
const { main } = await import(${JSON.stringify(join(root, 'reference-server/src/cli.ts'))});
const code = await main(process.argv.slice(1)); if (code !== 0) process.exit(code);`;

type Start = { ms: number; rssMb: number; peakMb: number };

function kilobytes(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

async function startOnce(compiled: boolean): Promise<Start> {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-bench-start-'));
  const args = ['start', '--db', join(folder, 's.db'), '--port', '0', '--test-widget-port', '0'];
  args.push('--live-widget-port', '0');
  const started = performance.now();
  const child = compiled
    ? spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: folder })
    : spawn(process.execPath, ['--input-type=module', '-e', FROM_SOURCE, ...args], {
        stdio: ['ignore', 'pipe', 'inherit'],
        cwd: root,
      });
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString('utf8').includes('listening on')) resolve(performance.now() - started);
      });
      child.on('exit', (code) => reject(new Error(`the server exited with ${code} before listening`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return { ms, rssMb: kilobytes(status, 'VmRSS') / 1024, peakMb: kilobytes(status, 'VmHWM') / 1024 };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    rmSync(folder, { recursive: true, force: true });
  }
}

const runs: Record<'compiled' | 'source', Start[]> = { compiled: [], source: [] };
for (let n = 0; n < STARTS; n++) {
  for (const kind of n % 2 === 0 ? (['compiled', 'source'] as const) : (['source', 'compiled'] as const)) {
    runs[kind].push(await startOnce(kind === 'compiled'));
  }
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const summary = (starts: Start[]) => ({
  ms: median(starts.map((s) => s.ms)),
  min: Math.min(...starts.map((s) => s.ms)),
  max: Math.max(...starts.map((s) => s.ms)),
  rss: median(starts.map((s) => s.rssMb)),
  peak: median(starts.map((s) => s.peakMb)),
});
const compiled = summary(runs.compiled);
const source = summary(runs.source);
console.log(
  `\nservicepay-server start, ${STARTS} starts each, alternated, fresh SQLite file each, spawn → listening`,
);
console.log('| how it runs | start ms (median) | min | max | RSS MB idle (median) | peak RSS MB |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, row] of [
  ['compiled (dist/cli.js, tsup)', compiled],
  ['before: source through tsx, registered at start', source],
] as const) {
  console.log(
    `| ${name} | ${fmt(row.ms, 0)} | ${fmt(row.min, 0)} | ${fmt(row.max, 0)} | ${fmt(row.rss, 1)} | ${fmt(row.peak, 1)} |`,
  );
}
reportTarget({
  measure: 'servicepay-server start: spawn → listening, compiled vs through tsx',
  figure: `${fmt(compiled.ms, 0)} ms, RSS ${fmt(compiled.rss, 1)} MB`,
  baseline: `through tsx: ${fmt(source.ms, 0)} ms, RSS ${fmt(source.rss, 1)} MB`,
  target: 'no target (measured)',
  met: true,
  verdict: 'measured',
});
