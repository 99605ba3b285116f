/**
 * Session creation throughput and latency over loopback, beside two baselines measured in the same run:
 * a bare node:http endpoint answering the same JSON (the ceiling) and an express route that parses and
 * answers it (the framework floor). Target: ServicePay ≥ 0.6× the express route, with every session fsynced
 * (WAL, synchronous=FULL) before its 201.
 */
import { fmt, type LoadResult, runLoad, startBenchServer, stopBenchServer } from './support/load.ts';

const CONNECTIONS = 64;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const WARMUP_MS = 1000;
const TARGET_RATIO = 0.6;

const body = (index: number) =>
  JSON.stringify({
    amount: 500000,
    currency: 'NGN',
    payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    reference: `bench-${process.pid}-${index}`,
  });

async function measure(kind: 'bare' | 'express' | 'servicepay'): Promise<LoadResult> {
  const server = await startBenchServer(kind);
  try {
    return await runLoad({
      url: server.url,
      path: '/api/widget/sessions',
      connections: CONNECTIONS,
      durationMs: DURATION_MS,
      warmupMs: WARMUP_MS,
      headers: () => (server.secretKey ? { authorization: `Bearer ${server.secretKey}` } : {}),
      body,
      expectStatus: 201,
    });
  } finally {
    await stopBenchServer(server.child);
  }
}

const bare = await measure('bare');
const expressRoute = await measure('express');
const servicepay = await measure('servicepay');

console.log(`\nSession creation, ${CONNECTIONS} concurrent clients, ${DURATION_MS / 1000}s each, loopback`);
console.log('| server | requests/s | p50 ms | p99 ms | errors | vs bare | vs express |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [name, result] of [
  ['bare node:http (ceiling)', bare],
  ['express route (floor)', expressRoute],
  ['ServicePay create (fsynced)', servicepay],
] as const) {
  console.log(
    `| ${name} | ${fmt(result.perSecond, 0)} | ${fmt(result.p50Ms, 2)} | ${fmt(result.p99Ms, 2)} | ${result.errors} | ${fmt(result.perSecond / bare.perSecond, 2)}× | ${fmt(result.perSecond / expressRoute.perSecond, 2)}× |`,
  );
}
const ratio = servicepay.perSecond / expressRoute.perSecond;
console.log(
  `\nTarget ≥ ${TARGET_RATIO}× the express route: ${fmt(ratio, 2)}× → ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}`,
);
if (servicepay.errors > 0)
  console.log(`ServicePay answered ${servicepay.errors} requests with something other than 201.`);
