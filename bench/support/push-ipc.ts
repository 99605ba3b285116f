/**
 * Request/answer over the IPC channel between bench/push-latency.ts and its child processes (the server, the
 * stream holder). Each request carries an `id`; the child answers with the same `id`, so answers can never be
 * taken for one another, whatever order they come back in.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

type Message = { id?: number; type: string; [key: string]: unknown };

/** A bench child: `ask` sends a request and resolves with its answer; `ready` is its first message. */
export interface BenchChild {
  ready: Message;
  ask<T = Message>(message: Message): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Forks `file` (a path relative to this folder) under tsx and waits for its `{ type: 'ready' }` message.
 *
 * @example
 * const server = await forkChild('push-server.ts', ['--expose-gc']);
 * const memory = await server.ask({ type: 'memory' });
 */
export async function forkChild(
  file: string,
  execArgv: string[] = [],
  env: Record<string, string> = {},
): Promise<BenchChild> {
  const child: ChildProcess = fork(fileURLToPath(new URL(`./${file}`, import.meta.url)), [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (message: Message) => void>();
  let nextId = 1;
  const [ready] = (await once(child, 'message')) as [Message];
  child.on('message', (message: Message) => {
    const waiter = message.id === undefined ? undefined : waiting.get(message.id);
    if (waiter && message.id !== undefined) {
      waiting.delete(message.id);
      waiter(message);
    }
  });
  return {
    ready,
    ask<T>(message: Message) {
      const id = nextId++;
      return new Promise<T>((resolve) => {
        waiting.set(id, resolve as (message: Message) => void);
        child.send({ ...message, id });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.send({ type: 'stop' });
      await exited;
    },
  };
}

/**
 * The child's side: answers each request with what `handle` returns, tagged with the request's id.
 *
 * @example
 * answerParent(async (message) => (message.type === 'memory' ? process.memoryUsage() : {}));
 */
export function answerParent(handle: (message: Message) => Promise<object> | object): void {
  process.on('message', async (message: Message) => {
    const answer = await handle(message);
    process.send?.({ ...answer, type: message.type, id: message.id });
  });
}

/** Event-loop lag of this process over a window, in milliseconds: p50, p99 and max. */
export interface Lag {
  p50: number;
  p99: number;
  max: number;
}

/**
 * Measures this process's event-loop lag from `start()` to `stop()`. monitorEventLoopDelay records how late a
 * timer that should fire every 10 ms actually fired; the 10 ms period is taken off, so an idle loop reads ~0.
 *
 * @example
 * const lag = lagMonitor(); lag.start(); ...; const { p99 } = lag.stop();
 */
export function lagMonitor(): { start(): void; stop(): Lag } {
  const resolution = 10;
  const histogram = monitorEventLoopDelay({ resolution });
  const late = (ns: number) => Math.max(0, ns / 1e6 - resolution);
  return {
    start() {
      histogram.reset();
      histogram.enable();
    },
    stop() {
      histogram.disable();
      return {
        p50: late(histogram.percentile(50)),
        p99: late(histogram.percentile(99)),
        max: late(histogram.max),
      };
    },
  };
}
