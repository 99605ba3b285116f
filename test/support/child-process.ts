import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root, the working directory of the commands a user would type. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A process started by a test: what it printed so far, and a way to stop it as Ctrl-C would. */
export interface RunningProcess {
  child: ChildProcess;
  output(): string;
  /** Waits until the output matches `pattern`; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code when the process ends by itself. */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGINT by default, what Ctrl-C sends) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts a command as a user would (a real child process, stdout and stderr collected together). Always stop
 * it in an `afterAll`/`finally`: `stop()` on an exited process resolves at once.
 *
 * @example
 * const shop = startProcess(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: 'examples/express-shop' });
 * const [, url] = await shop.waitFor(/Example shop on (http:\S+)/);
 * await shop.stop(); // SIGINT, as Ctrl-C
 */
export function startProcess(
  command: string,
  args: string[],
  options: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    /** A file descriptor for the child's standard error instead of a pipe (its output then has stdout only). */
    stderr?: number;
  } = {},
): RunningProcess {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exited = false;
  let exitCode: number | null = null;
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      exitCode = code ?? (signal ? null : 0);
      for (const listener of listeners) listener();
      resolve(exitCode);
    });
  });
  return {
    child,
    output: () => out,
    exited: exit,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(out);
          if (match) {
            done();
            resolve(match);
          } else if (exited) {
            done();
            reject(new Error(`exited with ${exitCode} before printing ${pattern}:\n${out}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${out}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGINT') {
      if (!exited) child.kill(signal);
      return exit;
    },
  };
}

/**
 * Polls `probe` until it returns something other than undefined (at most `timeoutMs`).
 *
 * @example
 * const paid = await eventually(async () => ((await getOrder()).status === 'paid' ? true : undefined));
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`nothing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
