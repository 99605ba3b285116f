import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';
import {
  postgresAvailable,
  reportIfPostgresMissing,
  type ScratchPostgres,
  startPostgres,
} from '../support/postgres.ts';

// The harness every PostgreSQL suite stands on: a real server of its own, restarted on demand, and nothing
// left behind (no process, no directory) once stopped.

reportIfPostgresMissing();

/** The command lines of running processes that name `path` (the postmaster names its data directory). */
const processesUsing = (path: string): string[] => {
  try {
    return execFileSync('pgrep', ['-a', '-f', path]).toString().trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
};

const query = async (url: string, text: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
};

describe.runIf(postgresAvailable)('startPostgres: a scratch PostgreSQL for a test file', () => {
  let postgres: ScratchPostgres | undefined;
  afterAll(() => postgres?.stop());

  it('serves a servicepay database on loopback, survives a restart, and leaves nothing once stopped', async () => {
    postgres = await startPostgres();
    const { url, dataDir } = postgres;
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/servicepay$/);
    const [info] = await query(
      url,
      "SELECT current_database() AS db, current_setting('data_directory') AS dir, current_setting('fsync') AS fsync",
    );
    expect(info).toEqual({ db: 'servicepay', dir: dataDir, fsync: 'off' });
    if (process.getuid?.() === 0) {
      // initdb and postgres refuse root: the cluster belongs to the postgres system user.
      const postgresUid = Number(execFileSync('id', ['-u', 'postgres']).toString());
      expect(statSync(dataDir).uid).toBe(postgresUid);
    }
    expect(processesUsing(dataDir).length).toBeGreaterThan(0);

    const other = await postgres.createDatabase('second_db');
    expect(await query(other, 'SELECT current_database() AS db')).toEqual([{ db: 'second_db' }]);

    await query(url, 'CREATE TABLE kept (n integer); INSERT INTO kept VALUES (7)');
    await postgres.restart();
    expect(await query(url, 'SELECT n FROM kept')).toEqual([{ n: 7 }]);

    await postgres.stop();
    await postgres.stop(); // twice is harmless
    expect(processesUsing(dataDir)).toEqual([]);
    expect(existsSync(dirname(dataDir))).toBe(false);
    await expect(query(url, 'SELECT 1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe.runIf(postgresAvailable)('a process that exits without stop()', () => {
  it('takes its scratch cluster down with it: no server process, no directory', () => {
    const script = `
      const { startPostgres } = await import('./test/support/postgres.ts');
      const postgres = await startPostgres();
      process.stdout.write(postgres.dataDir);
      process.exit(0);`;
    const dataDir = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
    }).toString();
    expect(dataDir).toMatch(/servicepay-pg-.+\/data$/);
    expect(processesUsing(dataDir)).toEqual([]);
    expect(existsSync(dirname(dataDir))).toBe(false);
  });
});

describe('without PostgreSQL binaries', () => {
  it('the suites are skipped with one line saying why, however many files ask', () => {
    const script = `
      const harness = await import('./test/support/postgres.ts');
      harness.reportIfPostgresMissing();
      harness.reportIfPostgresMissing();
      process.stdout.write('available=' + harness.postgresAvailable + '\\n');`;
    try {
      const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        env: { ...process.env, SERVICEPAY_POSTGRES_BIN_DIR: '/nonexistent/postgresql/bin' },
      }).toString();
      expect(out).toBe(
        'postgres suites: no PostgreSQL server binaries (initdb, pg_ctl, postgres) in /nonexistent/postgresql/bin; ' +
          "not run (.ci/run installs Debian's postgresql)\navailable=false\n",
      );
    } finally {
      // The once-per-run marker of that child's run (its parent is this process).
      rmSync(join(tmpdir(), `servicepay-postgres-missing-${process.pid}`), { force: true });
    }
  });
});
