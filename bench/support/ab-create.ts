/**
 * A/B of the SQLite keyed create's server CPU (issue 38): the servicepay bench server of two checkouts (A, the
 * build before a cut; B, the build with it), both started, loaded in turn (A B B A …, autocannon -c 50 in its own
 * process, the SDK's keyed create), each one's CPU read from /proc (utime+stime) around its runs and divided by
 * every answer it gave. CPU, not rate: it holds on a loaded machine where a rate does not.
 *
 *   node --import tsx bench/support/ab-create.ts --a /tmp/base --b . [--rounds 6] [--seconds 3] [--postgres]
 *   node --import tsx bench/support/ab-create.ts --a 3e090d8 --b .
 *
 * `--a` and `--b` are checkouts' folders, or commits of this repository (`baselineCheckout` extracts one into the
 * temp folder with this checkout's `node_modules`).
 *
 * `--postgres`: both builds on one PostgreSQL of this script's own (fsync on, `durable-postgres.ts`), each with a
 * business of its own; PostgreSQL's CPU (its processes', from /proc) is read around each run too, which is the
 * loaded build's alone since the two are loaded in turn.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { baselineCheckout } from './baseline-checkout.ts';
import { startDurablePostgres } from './durable-postgres.ts';
import { cpuSeconds, fmt, machineLoad, runLoad, startBenchServer, stopBenchServer } from './load.ts';
import { postgresCpuSeconds } from './postgres-profile.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '3' },
    postgres: { type: 'boolean', default: false },
  },
});
if (!values.a)
  throw new Error(
    'usage: ab-create.ts --a <checkout or commit> --b <checkout or commit> [--rounds N] [--seconds S]',
  );

const postgres = values.postgres ? await startDurablePostgres(false) : undefined;
const databaseCpu = () => (postgres ? postgresCpuSeconds(postgres.dataDir) : 0);

/** A checkout's folder as given, or a commit's files made ready beside this one (`baselineCheckout`). */
function folderOf(build: string): string {
  if (existsSync(build)) return build;
  const checkout = baselineCheckout(build);
  if ('missing' in checkout) throw new Error(checkout.missing);
  return checkout.folder;
}

const start = (build: string) =>
  startBenchServer('servicepay', postgres ? ['--database-url', postgres.url] : [], [], folderOf(build));

const builds = { A: await start(values.a), B: await start(values.b) };
const totals = {
  A: { cpu: 0, database: 0, answers: 0, rounds: [] as number[] },
  B: { cpu: 0, database: 0, answers: 0, rounds: [] as number[] },
};
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    // A B, then B A: neither always runs first.
    for (const name of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const server = builds[name];
      const before = cpuSeconds(server.child);
      const databaseBefore = databaseCpu();
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
      totals[name].database += databaseCpu() - databaseBefore;
      totals[name].answers += result.allResponses;
      totals[name].rounds.push((cpu / result.allResponses) * 1e6);
      if (result.errors > 0) console.log(`${name}: unexpected answers ${JSON.stringify(result.statuses)}`);
    }
  }
} finally {
  await stopBenchServer(builds.A);
  await stopBenchServer(builds.B);
  postgres?.stop();
}
const per = (name: 'A' | 'B') => (totals[name].cpu / totals[name].answers) * 1e6;
const perDatabase = (name: 'A' | 'B') => (totals[name].database / totals[name].answers) * 1e6;
if (postgres) {
  for (const name of ['A', 'B'] as const) {
    console.log(
      `${name}: PostgreSQL ${fmt(perDatabase(name), 0)} µs CPU per create; server + PostgreSQL ${fmt(per(name) + perDatabase(name), 0)} µs; ${fmt(totals[name].answers / (Number(values.rounds) * (Number(values.seconds) + 0.5)), 0)} creates/s (loaded machine)`,
    );
  }
}
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
