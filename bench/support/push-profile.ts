/**
 * Summarises a CPU profile (`.cpuprofile`, as `push-latency.ts --profile` or `node --cpu-prof` write it): self
 * time by function, the largest first, and the share of idle, GC and program time.
 *
 *   node --import tsx bench/support/push-profile.ts server.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: push-profile.ts <file.cpuprofile> [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const names = new Map<number, string>();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
  names.set(node.id, `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`);
}
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, index) => {
  const micros = profile.timeDeltas[index] ?? 0;
  const name = names.get(id) ?? '?';
  self.set(name, (self.get(name) ?? 0) + micros);
  total += micros;
});
const share = (name: string) => ((self.get(name) ?? 0) / total) * 100;
console.log(
  `${(total / 1e6).toFixed(1)} s profiled: idle ${share('(idle)').toFixed(1)}%, GC ${share('(garbage collector)').toFixed(1)}%, program ${share('(program)').toFixed(1)}%`,
);
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
for (const [name, micros] of rows) {
  console.log(
    `${((micros / total) * 100).toFixed(2).padStart(6)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`,
  );
}
