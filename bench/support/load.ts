/**
 * What a benchmark uses to load a server: `runLoad` runs the load generator (`load-generator.ts`) in a process
 * of its own and waits for its result; `startBenchServer` runs one of `bench-servers.ts`'s servers in another.
 * The benchmark's own process only orchestrates and prints, so neither the server nor the generator shares an
 * event loop with anything else (issue 12: the in-process generator shared the cores and flattered the ratio).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface LoadOptions {
  url: string;
  method: 'GET' | 'POST';
  /** Path and query. */
  path: string;
  /** Concurrent connections, each sending its next request as soon as the last one answered. */
  connections: number;
  durationMs: number;
  /** Load sent before measuring starts (JIT, caches, connection set-up). */
  warmupMs: number;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** `session`: a session-create JSON body, unique reference per request. */
  body?: 'session';
  /**
   * A fresh `Idempotency-Key` on every request: `sdk`, the key the SDK sends on a POST when its caller gives
   * none (a UUIDv7: it starts with the time); `uuidv4`, a random UUID, as a caller that makes its own keys with
   * `crypto.randomUUID()` sends. Absent: no key.
   */
  idempotencyKey?: 'sdk' | 'uuidv4';
  /**
   * Every request the same bytes (one body, one key), built once by the generator instead of once per request:
   * a client retrying one refused create. For a server that answers without reading the body (a 429), so the
   * rate measures the server, not the generator's request building (about 30 µs of its CPU per request).
   */
  sameRequest?: boolean;
  /** The status a request should get; any other counts as an error. */
  expectStatus: number;
}

export interface LoadResult {
  /** Responses during the measured window, of any status. */
  requests: number;
  /**
   * Responses over the whole run, warm-up included, of any status: what a server's CPU read from `/proc` around
   * the run (warm-up included) is divided by, so CPU per answer counts the answers it was spent on.
   */
  allResponses: number;
  /** Responses with `expectStatus`. */
  expected: number;
  /** Responses with another status, and socket errors. */
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  /** Responses with `expectStatus` per second. */
  perSecond: number;
  /**
   * CPU the load generator itself used while measuring, as a share of one core (1 = a whole core). Near 1, the
   * rate is bounded by the generator, not by the server: on a 2-core machine they share the cores.
   */
  generatorCpuShare: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Every measured latency, ascending. */
  latenciesMs: number[];
}

/**
 * Several runs of one kind (alternated with others) as one: rates from the totals, percentiles over all.
 *
 * @example
 * const express = combine([await runLoad(expressRun), await runLoad(expressRun)]);
 */
export function combine(results: readonly LoadResult[]): LoadResult {
  const latenciesMs = results.flatMap((result) => result.latenciesMs).sort((a, b) => a - b);
  const at = (q: number) =>
    latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(q * latenciesMs.length))] ?? Number.NaN;
  const sum = (pick: (result: LoadResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  const statuses: Record<string, number> = {};
  for (const result of results) {
    for (const [status, count] of Object.entries(result.statuses)) {
      statuses[status] = (statuses[status] ?? 0) + count;
    }
  }
  const seconds = sum((result) => result.seconds);
  const expected = sum((result) => result.expected);
  return {
    requests: sum((result) => result.requests),
    allResponses: sum((result) => result.allResponses),
    expected,
    errors: sum((result) => result.errors),
    statuses,
    seconds,
    perSecond: expected / seconds,
    generatorCpuShare: sum((result) => result.generatorCpuShare * result.seconds) / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    maxMs: latenciesMs.at(-1) ?? Number.NaN,
    latenciesMs,
  };
}

const GENERATOR = fileURLToPath(new URL('./load-generator.ts', import.meta.url));
const SERVERS = fileURLToPath(new URL('./bench-servers.ts', import.meta.url));

/**
 * Runs the load generator in its own process; resolves to what it measured.
 *
 * @example
 * const result = await runLoad({ url, method: 'GET', path: '/health', connections: 1, durationMs: 1000,
 *   warmupMs: 200, expectStatus: 200 });
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', GENERATOR, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    output += chunk;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  return JSON.parse(output) as LoadResult;
}

export type BenchServerKind = 'bare' | 'express' | 'express-born' | 'servicepay' | 'create-sql-floor';

export interface BenchServer {
  url: string;
  /** A test secret key of a business of this server (servicepay only). */
  secretKey?: string;
  /** The server's database file (servicepay only). */
  dbPath?: string;
  child: ChildProcess;
}

/**
 * Starts one of bench-servers.ts's servers in a child process and waits for its ready line (example:
 * `await startBenchServer('servicepay', ['--rate-limit', '150'])`). `args` go to the
 * server (servicepay: `--db PATH`, `--key sk_…`, `--rate-limit N`, `--database-url URL`); `nodeArgs` to node
 * (`--cpu-prof`); `checkout`, another build's folder (`baselineCheckout`), whose bench-servers.ts is started
 * instead of this one's.
 */
export async function startBenchServer(
  kind: BenchServerKind,
  args: string[] = [],
  nodeArgs: string[] = [],
  checkout?: string,
): Promise<BenchServer> {
  const servers = checkout ? join(resolve(checkout), 'bench/support/bench-servers.ts') : SERVERS;
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', servers, kind, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(checkout ? { cwd: resolve(checkout) } : {}),
  });
  if (!child.stdout) throw new Error('no stdout from the bench server');
  const lines = createInterface({ input: child.stdout });
  const [line] = (await once(lines, 'line')) as [string];
  return { ...(JSON.parse(line) as Omit<BenchServer, 'child'>), child };
}

/**
 * Stops a bench server: SIGINT lets it write a CPU profile if it was started with `--cpu-prof`.
 *
 * @example
 * await stopBenchServer(server);
 */
export async function stopBenchServer(server: BenchServer): Promise<void> {
  const exited = once(server.child, 'exit');
  server.child.kill('SIGINT');
  await exited;
}

/**
 * CPU time (user + system, seconds) a process has used so far, from `/proc/<pid>/stat` (Linux; NaN elsewhere).
 * Read before and after a run, it tells what the server spent per answer, whatever the generator could send.
 *
 * @example
 * const before = cpuSeconds(server.child); await runLoad(options); const spent = cpuSeconds(server.child) - before;
 */
export function cpuSeconds(child: ChildProcess): number {
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at index 2; utime and stime are fields 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * The machine's load average over the last minute and its core count, printed beside every CPU figure: CPU per
 * answer holds on a loaded machine where a rate does not, but a reader should know the machine was loaded.
 *
 * @example
 * console.log(`CPU per create … (${machineLoad()})`); // "load 15.2 on 2 cores"
 */
export function machineLoad(): string {
  return `load ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`;
}

export const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** `met` or `NOT met`, as every benchmark prints beside its target (`verdict(ratio >= 0.6)`). */
export const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
