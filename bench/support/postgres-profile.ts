/**
 * Where a PostgreSQL create's time goes (issue 25), for `npm run bench -- postgres` with `BENCH_PROFILE=1`:
 * the CPU each side spends per create (the server process, and PostgreSQL's own processes), read from `/proc` so
 * the figure is CPU time, not wall time, and holds on a machine shared with other work; and the statements
 * PostgreSQL ran, from `pg_stat_statements`, with their calls per create and their execution time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/** The `-c` settings that load `pg_stat_statements` into a cluster at its start. */
export const PG_STAT_STATEMENTS_SETTINGS =
  '-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all ';

/** User + system CPU seconds of one process, and of its reaped children when `withChildren`. */
function processCpuSeconds(pid: number, withChildren: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name start at index 2: utime, stime, cutime, cstime are fields 14-17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    const children = withChildren ? Number(fields[13]) + Number(fields[14]) : 0;
    return (own + children) / 100;
  } catch {
    return 0; // the process ended between the listing and the read: its time is in its parent's children.
  }
}

/**
 * CPU seconds PostgreSQL has spent so far: the postmaster with every backend it has reaped, plus the backends
 * alive now (each connection is a process of its own). Read before and after a run.
 */
export function postgresCpuSeconds(dataDir: string): number {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = processCpuSeconds(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) total += processCpuSeconds(Number(entry), false);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Turns `pg_stat_statements` on in the database and clears what it has counted so far. */
export async function resetStatements(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
  } finally {
    await client.end();
  }
}

/**
 * The statements PostgreSQL ran since the reset, the most execution time first, per unit of work made meanwhile
 * (`what`: a create, by default, or a whole payment).
 */
export async function printStatements(
  url: string,
  creates: number,
  top = 12,
  what = 'create',
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      query: string;
      calls: string;
      total: number;
      mean: number;
      plans: string;
    }>(
      `SELECT query, calls, plans, total_exec_time AS total, mean_exec_time AS mean
         FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT $1`,
      [top],
    );
    const all = await client.query<{ calls: string; total: number }>(
      `SELECT sum(calls) AS calls, sum(total_exec_time) AS total FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    const totalCalls = Number(all.rows[0]?.calls ?? 0);
    const totalMs = Number(all.rows[0]?.total ?? 0);
    console.log(
      `\npg_stat_statements over ${creates.toLocaleString('en')} × ${what}: ${(totalCalls / creates).toFixed(2)} statements and ${(totalMs / creates).toFixed(3)} ms of execution per ${what}`,
    );
    console.log(`| statement | calls per ${what} | mean ms | share of execution |`);
    console.log('|---|---:|---:|---:|');
    for (const row of rows) {
      const text = row.query.replace(/\s+/g, ' ').slice(0, 90).replaceAll('|', '\\|');
      console.log(
        `| \`${text}\` | ${(Number(row.calls) / creates).toFixed(2)} | ${row.mean.toFixed(3)} | ${((row.total / totalMs) * 100).toFixed(1)}% |`,
      );
    }
  } finally {
    await client.end();
  }
}
