/**
 * The load generator, run as its own process so it never shares the server's event loop or the orchestrator's:
 * `node --import tsx bench/support/load-generator.ts '<LoadOptions as JSON>'` prints one JSON line, a
 * `LoadResult`. `bench/support/load.ts` starts it; a benchmark never imports this file.
 *
 * autocannon drives the connections (closed loop: each of `connections` sends its next request as soon as the
 * last one answered) and writes requests on raw sockets, which costs this process less of the two cores than
 * an HTTP client library would. Latency is taken from autocannon's per-response event in fractional
 * milliseconds (its own histogram rounds to whole ones, too coarse for a 1 ms list answer), from the first
 * response after the warm-up to the end of the run; requests still in flight when the run ends are not counted.
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { newIdempotencyKey } from '../../sdk/src/internal/idempotency-key.ts';
import type { LoadOptions, LoadResult } from './load.ts';

const options = JSON.parse(process.argv[2] ?? '') as LoadOptions;
const runId = `${process.pid}-${Date.now().toString(36)}`;
let sent = 0;

/** A session create body, unique per request (the reference is unique per business and environment). */
const sessionBody = (index: number) =>
  JSON.stringify({
    amount: 500000,
    currency: 'NGN',
    payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    reference: `bench-${runId}-${index}`,
  });

const staticHeaders: Record<string, string> = {
  ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
  ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
};

/** The headers of one request: the fixed ones, and a fresh `Idempotency-Key` if the run sends one. */
const headersOfRequest = (): Record<string, string> => {
  const headers: Record<string, string> = { ...staticHeaders };
  if (options.idempotencyKey === 'sdk') headers['idempotency-key'] = newIdempotencyKey();
  if (options.idempotencyKey === 'uuidv4') headers['idempotency-key'] = randomUUID();
  return headers;
};

/** The one request of a `sameRequest` run, made once. */
const sameRequest = () => ({
  headers: headersOfRequest(),
  ...(options.body === 'session' ? { body: sessionBody(0) } : {}),
});

const latencies: number[] = [];
const statuses: Record<string, number> = {};
let expected = 0;
let unexpected = 0;
let socketErrors = 0;
let measuring = false;
let allResponses = 0;

const instance = autocannon(
  {
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    duration: (options.warmupMs + options.durationMs) / 1000,
    timeout: 30,
    requests: [
      options.sameRequest
        ? { method: options.method, path: options.path, ...sameRequest() }
        : {
            method: options.method,
            path: options.path,
            setupRequest: (request) => {
              const index = sent++;
              return {
                ...request,
                headers: headersOfRequest(),
                ...(options.body === 'session' ? { body: sessionBody(index) } : {}),
              };
            },
          },
    ],
  },
  () => undefined,
);

let measuredFrom = 0;
let cpuFrom = process.cpuUsage();
instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
  allResponses++;
  if (!measuring) return;
  latencies.push(responseTime);
  statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  if (statusCode === options.expectStatus) expected++;
  else unexpected++;
});
instance.on('reqError', () => {
  if (measuring) socketErrors++;
});
setTimeout(() => {
  measuring = true;
  measuredFrom = performance.now();
  cpuFrom = process.cpuUsage();
}, options.warmupMs);

instance.on('done', () => {
  const seconds = (performance.now() - measuredFrom) / 1000;
  const cpu = process.cpuUsage(cpuFrom);
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  const result: LoadResult = {
    requests: latencies.length,
    allResponses,
    expected,
    errors: unexpected + socketErrors,
    statuses,
    seconds,
    perSecond: expected / seconds,
    generatorCpuShare: (cpu.user + cpu.system) / 1e6 / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    maxMs: latencies.at(-1) ?? Number.NaN,
    // Every latency (µs precision), so a benchmark can take percentiles over several alternated runs.
    latenciesMs: latencies.map((ms) => Math.round(ms * 1000) / 1000),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
