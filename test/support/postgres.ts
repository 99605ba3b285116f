import { execFile, execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

const SERVER_BINARIES = ['initdb', 'pg_ctl', 'postgres'];
const hasServerBinaries = (dir: string) => SERVER_BINARIES.every((bin) => existsSync(join(dir, bin)));

/**
 * The newest PostgreSQL server binaries on this machine: `SERVICEPAY_POSTGRES_BIN_DIR` when set (another
 * layout, such as Homebrew's), else Debian's `/usr/lib/postgresql/<major>/bin`, else PATH.
 */
function findBinDir(): string | undefined {
  const chosen = process.env.SERVICEPAY_POSTGRES_BIN_DIR;
  if (chosen !== undefined) return hasServerBinaries(chosen) ? chosen : undefined;
  const root = '/usr/lib/postgresql';
  const debian = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
        .map((major) => join(root, major, 'bin'))
    : [];
  const onPath = (process.env.PATH ?? '').split(':').filter(Boolean);
  return [...debian, ...onPath].find(hasServerBinaries);
}

const binDir = findBinDir();
const asRoot = process.getuid?.() === 0;

/** The system user the server runs as when we are root: initdb and postgres refuse to run as root. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (!asRoot) return undefined;
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'postgres'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    // No such user (`id` exits 1).
    return undefined;
  }
}

const runAs = postgresUser();

/**
 * The user the scratch server runs as when the tests run as root (the `postgres` system user), else undefined
 * (it runs as the tests do): a folder the server must own, such as a tablespace's, is handed to it.
 */
export const postgresServerUser: { uid: number; gid: number } | undefined = runAs;

/** Why the PostgreSQL suites cannot run here, or undefined when they can. */
export const postgresMissingReason: string | undefined = !binDir
  ? `no PostgreSQL server binaries (initdb, pg_ctl, postgres) in ${
      process.env.SERVICEPAY_POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/*/bin or on PATH'
    }`
  : asRoot && !runAs
    ? 'running as root and there is no `postgres` system user to run the server as'
    : undefined;

/** True when this machine can start a scratch PostgreSQL (`describe.runIf(postgresAvailable)`). */
export const postgresAvailable = postgresMissingReason === undefined;

/**
 * Says once per test run, in one line, why the PostgreSQL suites do not run; silent when they do. Call it at
 * the top of every PostgreSQL test file. `vitestPid` names the run: a test worker's parent (the default), or
 * the vitest process itself when vitest.config.ts calls it for the `postgres` project it leaves out.
 *
 * @example
 * reportIfPostgresMissing();
 * describe.runIf(postgresAvailable)('the migrations on a real PostgreSQL', () => { … });
 */
export function reportIfPostgresMissing(vitestPid: number = process.ppid): void {
  if (postgresAvailable) return;
  // One line per `vitest run`, not per file: the first worker to create the marker prints it.
  const marker = join(tmpdir(), `servicepay-postgres-missing-${vitestPid}`);
  try {
    openSync(marker, 'wx');
  } catch {
    return;
  }
  process.stdout.write(
    `postgres suites: ${postgresMissingReason}; not run (.ci/run installs Debian's postgresql)\n`,
  );
}

/** A scratch PostgreSQL cluster a test started: its own data directory, socket directory and port. */
export interface ScratchPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/servicepay`: trust authentication on loopback, no password. */
  url: string;
  port: number;
  /** The cluster's data directory, inside the temporary directory `stop()` removes. */
  dataDir: string;
  /** A URL for another database of the same cluster (`createDatabase` makes it). */
  urlFor(database: string): string;
  /** Creates an empty database and returns its URL: a fresh schema per test without a new cluster. */
  createDatabase(name: string): Promise<string>;
  /**
   * Stops the server, keeps it down for `downMs`, and starts it again on the same port and data directory.
   * `fast` (the default) closes every connection as an operator's restart does; `immediate` stops without a
   * shutdown checkpoint, as a crash would, and the start runs crash recovery.
   */
  restart(options?: { downMs?: number; mode?: 'fast' | 'immediate' }): Promise<void>;
  /** Stops the server and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** A free loopback TCP port, as the kernel hands one out for port 0. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** Runs one of the server's binaries, as the `postgres` user when we are root. */
async function pgBin(bin: string, args: string[], cwd: string): Promise<string> {
  const path = join(binDir as string, bin);
  const [command, commandArgs] = runAs ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
  const { stdout } = await run(command, commandArgs, { cwd, env: { ...process.env, LC_ALL: 'C' } });
  return stdout;
}

/**
 * Clusters still running in this process, stopped at exit if a test forgot (or crashed before) `stop()`. One
 * set and one exit hook per process: a test worker may load this module once per test file.
 */
const RUNNING = Symbol.for('servicepay.scratch-postgres.running');
const registry = globalThis as typeof globalThis & { [RUNNING]?: Set<string> };
const running: Set<string> = registry[RUNNING] ?? new Set<string>();
if (!registry[RUNNING]) {
  registry[RUNNING] = running;
  process.once('exit', () => {
    for (const dataDir of running) {
      try {
        const pgCtl = join(binDir as string, 'pg_ctl');
        const args = ['stop', '-D', dataDir, '-m', 'immediate', '-w'];
        if (runAs) execFileSync('runuser', ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'ignore' });
        else execFileSync(pgCtl, args, { stdio: 'ignore' });
      } catch {
        // Already gone.
      }
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  });
}

/**
 * Starts a scratch PostgreSQL cluster: `initdb` into a fresh temporary directory (trust authentication, the
 * socket in that directory, fsync off: nothing here must survive a power cut), `pg_ctl start` on a free
 * loopback port, and a database named `servicepay`. One per test file, in `beforeAll`; `stop()` in `afterAll`
 * (`useScratchDatabase`, test/support/scratch-database.ts, registers both, with a database and pools). As root
 * the server runs as the `postgres` system user, which owns the directory.
 *
 * @example
 * const postgres = await startPostgres();
 * const pool = openPool(await postgres.createDatabase('orders'), { max: 2 });
 * try {
 *   await pool.query('SELECT 1');
 * } finally {
 *   await pool.end();
 *   await postgres.stop();
 * }
 */
export async function startPostgres(): Promise<ScratchPostgres> {
  if (!postgresAvailable) throw new Error(`cannot start PostgreSQL: ${postgresMissingReason}`);
  const dir = mkdtempSync(join(tmpdir(), 'servicepay-pg-'));
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const logFile = join(dir, 'server.log');
  mkdirSync(socketDir);
  if (runAs) for (const path of [dir, socketDir]) chownSync(path, runAs.uid, runAs.gid);

  const log = () =>
    existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
  let port = 0;
  const startServer = async () => {
    await pgBin(
      'pg_ctl',
      [
        'start',
        '-D',
        dataDir,
        '-l',
        logFile,
        '-w',
        '-t',
        '30',
        '-o',
        `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off ` +
          '-c full_page_writes=off -c max_connections=100',
      ],
      dir,
    );
    running.add(dataDir);
  };
  const stopServer = async (mode: 'fast' | 'immediate' = 'fast') => {
    if (!running.has(dataDir)) return;
    await pgBin('pg_ctl', ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '30'], dir);
    running.delete(dataDir);
  };

  try {
    await pgBin(
      'initdb',
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      dir,
    );
    // Another process may take the port between freePort() and the server's bind: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await startServer();
        break;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE servicepay');
    } finally {
      await admin.end();
    }
  } catch (error) {
    const detail = log();
    await stopServer().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`scratch PostgreSQL did not start: ${(error as Error).message}\n${detail}`, {
      cause: error,
    });
  }

  // A stop() from an afterAll while a failed test's restart() is still under way waits for it, rather than
  // removing the directory under a starting server.
  let last: Promise<unknown> = Promise.resolve();
  const serially = <T>(operation: () => Promise<T>): Promise<T> => {
    const next = last.then(operation, operation);
    last = next.catch(() => {});
    return next;
  };
  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url: urlFor('servicepay'),
    port,
    dataDir,
    urlFor,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const admin = new pg.Client({ connectionString: urlFor('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return urlFor(name);
    },
    restart({ downMs = 0, mode = 'fast' } = {}) {
      return serially(async () => {
        await stopServer(mode);
        if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
        await startServer();
      });
    },
    stop() {
      return serially(async () => {
        try {
          await stopServer();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    },
  };
}
