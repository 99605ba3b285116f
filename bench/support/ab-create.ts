/**
 * A/B of the SQLite keyed create's server CPU (issue 38): the servicepay bench server of two checkouts (A, the
 * build before a cut; B, the build with it), both started, loaded in turn (A B B A …, autocannon -c 50 in its own
 * process, the SDK's keyed create), each one's CPU read from /proc (utime+stime) around its runs and divided by
 * every answer it gave. CPU, not rate: it holds on a loaded machine where a rate does not.
 *
 *   node --import tsx bench/support/ab-create.ts --a /tmp/base --b . [--rounds 6] [--seconds 3]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { type BenchServer, cpuSeconds, fmt, machineLoad, runLoad, stopBenchServer } from './load.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '3' },
  },
});
if (!values.a)
  throw new Error('usage: ab-create.ts --a <checkout> --b <checkout> [--rounds N] [--seconds S]');

async function start(root: string): Promise<BenchServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(resolve(root), 'bench/support/bench-servers.ts'), 'servicepay'],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: resolve(root) },
  );
  if (!child.stdout) throw new Error('no stdout');
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { ...(JSON.parse(line) as Omit<BenchServer, 'child'>), child };
}

const builds = { A: await start(values.a), B: await start(values.b) };
const totals = {
  A: { cpu: 0, answers: 0, rounds: [] as number[] },
  B: { cpu: 0, answers: 0, rounds: [] as number[] },
};
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    // A B, then B A: neither always runs first.
    for (const name of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const server = builds[name];
      const before = cpuSeconds(server.child);
      const result = await runLoad({
        url: server.url,
        method: 'POST',
        path: '/api/widget/sessions',
        connections: 50,
        durationMs: Number(values.seconds) * 1000,
        warmupMs: 500,
        token: server.secretKey as string,
        body: 'session',
        idempotencyKey: 'sdk',
        expectStatus: 201,
      });
      const cpu = cpuSeconds(server.child) - before;
      totals[name].cpu += cpu;
      totals[name].answers += result.allResponses;
      totals[name].rounds.push((cpu / result.allResponses) * 1e6);
      if (result.errors > 0) console.log(`${name}: unexpected answers ${JSON.stringify(result.statuses)}`);
    }
  }
} finally {
  await stopBenchServer(builds.A);
  await stopBenchServer(builds.B);
}
const per = (name: 'A' | 'B') => (totals[name].cpu / totals[name].answers) * 1e6;
for (const name of ['A', 'B'] as const) {
  const rounds = totals[name].rounds;
  console.log(
    `${name} (${name === 'A' ? values.a : values.b}): ${fmt(per(name), 0)} µs server CPU per create over ${totals[name].answers} creates; rounds ${rounds.map((r) => fmt(r, 0)).join(' ')}`,
  );
}
const wins = totals.B.rounds.filter((b, i) => b < (totals.A.rounds[i] ?? Number.NaN)).length;
console.log(
  `B vs A: ${fmt(per('B') - per('A'), 0)} µs (${fmt(((per('B') - per('A')) / per('A')) * 100, 1)}%); B lower in ${wins} of ${totals.B.rounds.length} rounds; ${machineLoad()} (loaded machine)`,
);
