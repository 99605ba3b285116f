import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LoadOptions {
  url: string;
  path: string;
  /** Concurrent clients, each with its own connection. */
  connections: number;
  durationMs: number;
  warmupMs: number;
  headers: (index: number) => Record<string, string>;
  body: (index: number) => string;
  expectStatus: number;
}

/** Closed-loop load: `connections` clients each send the next request as soon as the last one answered. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  let measuring = false;
  let stop = false;
  const client = async () => {
    while (!stop) {
      const index = counter++;
      const started = process.hrtime.bigint();
      try {
        const response = await pool.request({
          method: 'POST',
          path: options.path,
          headers: { 'content-type': 'application/json', ...options.headers(index) },
          body: options.body(index),
        });
        await response.body.arrayBuffer();
        if (response.statusCode !== options.expectStatus) errors++;
      } catch {
        errors++;
      }
      if (measuring) latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  };
  const clients = Array.from({ length: options.connections }, client);
  await new Promise((resolve) => setTimeout(resolve, options.warmupMs));
  measuring = true;
  const errorsBefore = errors;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, options.durationMs));
  measuring = false;
  const seconds = (performance.now() - started) / 1000;
  const requests = latencies.length;
  stop = true;
  await Promise.all(clients);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  return {
    requests,
    errors: errors - errorsBefore,
    seconds,
    perSecond: requests / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

const SERVERS = fileURLToPath(new URL('./bench-servers.ts', import.meta.url));

/** Starts one of bench-servers.ts's servers in a child process and waits for its ready line. */
export async function startBenchServer(
  kind: 'bare' | 'express' | 'servicepay',
): Promise<{ url: string; secretKey?: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVERS, kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (!child.stdout) throw new Error('no stdout from the bench server');
  const lines = createInterface({ input: child.stdout });
  const [line] = (await once(lines, 'line')) as [string];
  return { ...(JSON.parse(line) as { url: string; secretKey?: string }), child };
}

export async function stopBenchServer(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

export const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
