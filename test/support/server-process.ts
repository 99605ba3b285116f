import { fileURLToPath } from 'node:url';
import { type RunningProcess, startProcess } from './child-process.ts';

const BIN = fileURLToPath(new URL('../../reference-server/bin/servicepay-server.js', import.meta.url));

/** How one `servicepay-server start` process is started: on PostgreSQL, or on a SQLite file. */
export interface ServerProcessOptions {
  /** The shared `postgres://…` database (`--database-url`); null or absent: SQLite at `dbPath`. */
  databaseUrl?: string | null;
  /** The SQLite file (`--db`), where there is no `databaseUrl`; its development key file sits beside it. */
  dbPath?: string;
  /** `--secrets-key-file`: on PostgreSQL the same file for every instance, so each opens what another sealed. */
  secretsKeyFile?: string;
  /** Extra environment, such as `SERVICEPAY_BANK_SECRET` (the same value on every instance). */
  env?: Record<string, string>;
  /** A file descriptor for its standard error (its log) instead of a pipe: `output()` then has stdout only. */
  stderr?: number;
}

/** A `servicepay-server start` process that printed its ready line. */
export interface ServerProcess {
  /** The API's base URL, from the ready line (`http://127.0.0.1:<port>`). */
  url: string;
  pid: number;
  /** Everything it printed so far (its JSON log lines), stdout and stderr together. */
  output(): string;
  /** Sends `signal` and resolves with the exit code (null when a signal ended it); at once if it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves when it has exited, however, with the exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** The signal that ended it (`SIGKILL`…), null while it runs or when it exited by itself. */
  readonly signal: NodeJS.Signals | null;
  /** Whether it is still running. */
  readonly running: boolean;
}

/** Every process started here and not yet seen to exit: `stopAllServerProcesses` ends them. */
const started = new Set<RunningProcess>();

/**
 * Starts the real CLI, `servicepay-server start`, in its own process on port 0 (API and both widget hosts)
 * with the fast webhook schedule, and resolves once it is listening. Always end it: `stop()` in the test, and
 * `stopAllServerProcesses()` in an `afterAll` for whatever a failure left running.
 *
 * @example
 * const instance = await startServerProcess({ databaseUrl, secretsKeyFile }); // or { dbPath } for SQLite
 * await fetch(new URL('/health', instance.url));
 * await instance.stop('SIGTERM'); // 0: closed cleanly
 */
export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  const child = startProcess(
    process.execPath,
    [
      BIN,
      'start',
      ...(options.databaseUrl ? ['--database-url', options.databaseUrl] : []),
      ...(options.dbPath ? ['--db', options.dbPath] : []),
      ...(options.secretsKeyFile ? ['--secrets-key-file', options.secretsKeyFile] : []),
      '--port',
      '0',
      '--test-widget-port',
      '0',
      '--live-widget-port',
      '0',
      '--webhook-schedule',
      'fast',
    ],
    // The settings a test does not give must not leak in from the environment the tests run in.
    {
      env: {
        SERVICEPAY_DATABASE_URL: undefined,
        SERVICEPAY_DB: undefined,
        SERVICEPAY_SECRETS_KEY: undefined,
        SERVICEPAY_BANK_SECRET: undefined,
        NODE_ENV: undefined,
        ...options.env,
      },
      ...(options.stderr === undefined ? {} : { stderr: options.stderr }),
    },
  );
  started.add(child);
  let running = true;
  void child.exited.then(() => {
    running = false;
    started.delete(child);
  });
  let url: string;
  try {
    const match = await child.waitFor(/listening on (http:\/\/[^\s]+)/, 30_000);
    url = match[1] as string;
  } catch (error) {
    await child.stop('SIGKILL');
    throw error;
  }
  return {
    url,
    pid: child.child.pid as number,
    output: child.output,
    stop: (signal = 'SIGTERM') => child.stop(signal),
    exited: child.exited,
    get running() {
      return running;
    },
    get signal() {
      return child.child.signalCode;
    },
  };
}

/**
 * Ends every server process started by `startServerProcess` that is still running: SIGTERM, then SIGKILL for
 * one still there after `graceMs`. For an `afterAll`, so that a failed test leaves nothing behind.
 *
 * @example
 * afterAll(() => stopAllServerProcesses());
 */
export async function stopAllServerProcesses(graceMs = 10_000): Promise<void> {
  await Promise.all(
    [...started].map(async (child) => {
      const timer = setTimeout(() => child.child.kill('SIGKILL'), graceMs);
      try {
        await child.stop('SIGTERM');
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}
