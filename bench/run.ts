/**
 * `npm run bench`: runs every benchmark in this folder, one process each, one after another (they measure
 * throughput, so they must not share the CPU). `npm run bench -- session` runs those whose name contains it.
 * Ends with one table of every target the benchmarks measured (their `reportTarget` lines), with the machine
 * and the date, ready to paste into docs/benchmarks.md.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseTargetLine, type TargetRow } from './support/targets.ts';

const folder = fileURLToPath(new URL('.', import.meta.url));
const filters = process.argv.slice(2);
const benches = readdirSync(folder)
  .filter((name) => name.endsWith('.ts') && name !== 'run.ts')
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();

/** Runs one benchmark, passing its output through and keeping its target lines. */
async function runBench(name: string, targets: Array<TargetRow & { bench: string }>): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', `${folder}${name}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const target = parseTargetLine(line);
    if (target) targets.push({ ...target, bench: name });
    else console.log(line);
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  if (code !== 0) console.log(`${name} exited with ${code ?? signal}`);
  return code === 0 ? 0 : 1;
}

const started = new Date();
const targets: Array<TargetRow & { bench: string }> = [];
let failed = 0;
for (const name of benches) {
  console.log(`\n=== ${name} ===`);
  failed += await runBench(name, targets);
}

const cpu = cpus();
console.log(
  `\n=== targets: ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version} ===`,
);
console.log('| measure | figure | baseline (same run) | target | verdict | bench |');
console.log('|---|---|---|---|---|---|');
for (const row of targets) {
  console.log(
    `| ${row.measure} | ${row.figure} | ${row.baseline} | ${row.target} | ${row.verdict ?? (row.met ? 'met' : '**missed**')} | ${row.bench} |`,
  );
}
const counted = targets.filter((row) => row.verdict === undefined);
const missed = counted.filter((row) => !row.met).length;
console.log(`\n${counted.length - missed} of ${counted.length} targets met.`);
process.exitCode = failed > 0 ? 1 : 0;
