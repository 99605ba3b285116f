/**
 * A PostgreSQL 15 cluster of a bench's own, with the durability a real deployment has (fsync, synchronous commit,
 * full page writes: PostgreSQL's defaults, which the test harness turns off), on a free loopback port.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { PG_STAT_STATEMENTS_SETTINGS } from './postgres-profile.ts';

const run = promisify(execFile);

/**
 * Starts the cluster with a database `servicepay`; `withStatements` loads `pg_stat_statements` too.
 *
 * @example
 * const postgres = await startDurablePostgres(false); // ... postgres.stop();
 */
export async function startDurablePostgres(
  withStatements: boolean,
): Promise<{ url: string; dataDir: string; stop: () => void }> {
  const binDir = '/usr/lib/postgresql/15/bin';
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'servicepay-bench-pg-'));
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  mkdirSync(socketDir);
  const owner = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
        gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
      }
    : undefined;
  if (owner) for (const path of [dir, socketDir]) chownSync(path, owner.uid, owner.gid);
  const bin = (name: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(binDir, name), ...args], { cwd: dir })
      : run(join(binDir, name), args, { cwd: dir });
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  await bin('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
  await bin('pg_ctl', [
    'start',
    '-D',
    dataDir,
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-o',
    `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on ` +
      '-c full_page_writes=on -c max_connections=100' +
      (withStatements ? ` ${PG_STAT_STATEMENTS_SETTINGS}` : ''),
  ]);
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query('CREATE DATABASE servicepay');
  await admin.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/servicepay`,
    dataDir,
    stop: () => {
      const args = ['stop', '-D', dataDir, '-m', 'fast', '-w'];
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', join(binDir, 'pg_ctl'), ...args]);
      else execFileSync(join(binDir, 'pg_ctl'), args);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
