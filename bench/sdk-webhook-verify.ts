/**
 * Webhook verification throughput: the SDK's `constructEvent` beside a hand-written `node:crypto` verifier, in the
 * same process and the same rounds. Target (issue 12): `constructEvent` ≥ 0.85× raw HMAC-SHA256 of a 1 KB body.
 * Two rows carry that target: `constructEvent` itself, and its verification alone (`verifySignature`), which is
 * what the issue's own figure (0.77×) measured: the bench of the day it was filed printed `verifySignature` at
 * 0.75× of raw HMAC and `constructEvent` at 0.38× (docs/benchmarks.md at 59f79a1, "Reading the misses").
 *
 * The baseline is the least a correct receiver does: HMAC-SHA256 over "<t>.<raw body>" (docs/protocol.md,
 * Webhook events, "Signature") and a constant-time compare against every `v1=` of the header, with `t` and the signatures already
 * cut out of the header and hex-decoded outside the timed loop (so the baseline does less than any real receiver;
 * nothing is flattered). It reads no JSON. `constructEvent` also parses the header, checks the timestamp
 * tolerance, decodes the hex, and JSON-parses and validates the event. Secondary rows, for reading the primary
 * one: `verifySignature` (the SDK's verification alone), raw HMAC + `JSON.parse` (the same baseline plus the JSON
 * read every receiver needs), and the edge entry's `constructEventAsync` (Web Crypto; no target, watched for
 * regressions).
 *
 * Headers are made by the reference server's own signer, as deliveries carry them: one `v1=` per active secret.
 * Cases: one secret; a rolled secret (two `v1=` in the header, the receiver holding the new secret); a rolled
 * secret with the receiver passing both secrets. Within a round the implementations run in alternating slices of
 * about 1 ms, in a rotating order, so machine noise hits all of them; each round's ratio uses that round's
 * figures, and the report gives the median over rounds and the spread (min–max). Bounded (about 40 s), no
 * network.
 *
 *   flock /tmp/bench.lock npm run bench -- sdk-webhook-verify
 */
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { signPayload } from '../reference-server/src/internal/signature.ts';
import { constructEvent, verifySignature } from '../sdk/src/index.ts';
import { constructEventAsync } from '../sdk/src/webhooks-edge.ts';
import { reportTarget } from './support/targets.ts';

const NEW_SECRET = 'whsec_bench0000000000000000000000new';
const OLD_SECRET = 'whsec_bench0000000000000000000000old';
const TARGET = 0.85;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const SLICES = Number(process.env.BENCH_SLICES ?? 60);
const SYNC_BATCH = 200;
const ASYNC_BATCH = 16;

/** A real `session.successful` event as the service writes it, its metadata padded to exactly `bytes`. */
const payloadOf = (bytes: number): string => {
  const event = {
    id: 'evt_3kTq9vXb2LmN8pRs',
    type: 'session.successful',
    environment: 'test',
    createdAt: '2026-01-01T12:01:00.000Z',
    data: {
      session: {
        id: 'ses_7hYt2QwErT9uIoPa',
        reference: 'order-100234',
        status: 'successful',
        environment: 'test',
        amount: 500_000,
        currency: 'NGN',
        payer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+2348012345678' },
        metadata: { orderId: '100234', cart: 'c_88213', note: '' },
        virtualAccount: {
          bankName: 'ServicePay Test Bank',
          accountNumber: '0123456789',
          accountName: 'Shop / Ada',
          expiresAt: '2026-01-01T12:30:00.000Z',
        },
        lastMismatch: null,
        createdAt: '2026-01-01T12:00:00.000Z',
        updatedAt: '2026-01-01T12:01:00.000Z',
        expiresAt: '2026-01-01T14:00:00.000Z',
        paidAt: '2026-01-01T12:01:00.000Z',
      },
    },
  };
  const base = Buffer.byteLength(JSON.stringify(event));
  event.data.session.metadata.note = 'x'.repeat(Math.max(0, bytes - base));
  return JSON.stringify(event);
};

type Op = () => unknown;
type AsyncOp = () => Promise<unknown>;

/**
 * One implementation in a round: `batch` calls per slice, its time summed over the round's slices. Slices of
 * every implementation alternate (about 1 ms each, in a rotating order), so a burst of load from elsewhere on
 * the machine falls on all of them, not on whichever owned a long window at the time.
 */
interface Runner {
  name: string;
  batch: number;
  slice: () => number | Promise<number>;
}

const syncRunner = (name: string, fn: Op): Runner => ({
  name,
  batch: SYNC_BATCH,
  slice: () => {
    const start = performance.now();
    for (let i = 0; i < SYNC_BATCH; i++) fn();
    return performance.now() - start;
  },
});

const asyncRunner = (name: string, fn: AsyncOp): Runner => ({
  name,
  batch: ASYNC_BATCH,
  slice: async () => {
    const start = performance.now();
    for (let i = 0; i < ASYNC_BATCH; i++) await fn();
    return performance.now() - start;
  },
});

/** Operations per second of each runner, one figure per round. */
const measure = async (runners: readonly Runner[]): Promise<number[][]> => {
  const ops: number[][] = runners.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const elapsed = runners.map(() => 0);
    for (let slice = 0; slice < SLICES; slice++) {
      for (let k = 0; k < runners.length; k++) {
        const index = (k + slice + round) % runners.length;
        elapsed[index] = (elapsed[index] as number) + (await (runners[index] as Runner).slice());
      }
    }
    for (const [index, runner] of runners.entries()) {
      (ops[index] as number[]).push(((runner.batch * SLICES) / (elapsed[index] as number)) * 1000);
    }
  }
  return ops;
};

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const spread = (values: readonly number[], digits: number): string =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

interface Case {
  name: string;
  signers: readonly string[];
  receiver: string | readonly string[];
}

const cases: readonly Case[] = [
  { name: 'one secret', signers: [NEW_SECRET], receiver: NEW_SECRET },
  {
    name: 'rolled: 2 × v1, receiver has the new secret',
    signers: [NEW_SECRET, OLD_SECRET],
    receiver: NEW_SECRET,
  },
  {
    name: 'rolled: 2 × v1, receiver passes [new, old]',
    signers: [NEW_SECRET, OLD_SECRET],
    receiver: [NEW_SECRET, OLD_SECRET],
  },
];

const payload = payloadOf(1024);
const body = Buffer.from(payload);
if (body.length !== 1024) throw new Error(`payload is ${body.length} bytes, not 1024`);

const summary: {
  case: string;
  ratio: number;
  spread: string;
  baseline: number;
  /** Raw HMAC + `JSON.parse` against raw HMAC: the most any verifier that returns the parsed event can reach. */
  ceiling: number;
  /** constructEvent against raw HMAC + `JSON.parse`: how much of that ceiling it reaches. */
  ofCeiling: number;
  /** verifySignature against raw HMAC, median of rounds, and its spread. */
  verification: number;
  verificationSpread: string;
}[] = [];
const tables: Record<string, Record<string, string | number>[]> = {};

for (const item of cases) {
  // Signed now, by the service's signer: the tolerance check sees a fresh timestamp throughout (≤ 30 s).
  const header = signPayload(body, item.signers, Math.floor(Date.now() / 1000));
  const t = header.slice(2, header.indexOf(','));
  const signatures = header
    .split(',')
    .filter((part) => part.startsWith('v1='))
    .map((part) => Buffer.from(part.slice(3), 'hex'));
  const secrets = typeof item.receiver === 'string' ? [item.receiver] : item.receiver;

  // The hand-written verifier: HMAC per secret, every signature compared in constant time, any match accepts.
  const handWritten =
    (keys: readonly (string | KeyObject)[]): Op =>
    () => {
      let matched = false;
      for (const key of keys) {
        const expected = createHmac('sha256', key).update(`${t}.`).update(body).digest();
        for (const signature of signatures) if (timingSafeEqual(expected, signature)) matched = true;
      }
      if (!matched) throw new Error('baseline did not verify');
      return matched;
    };
  const raw = handWritten(secrets);
  const rawAndParse: Op = () => raw() && JSON.parse(body.toString());
  // The same verifier with each secret made a `KeyObject` once, as the SDK does: what a hand-written verifier
  // gains from that alone, so the verification row can be read against both.
  const rawPrepared = handWritten(secrets.map((secret) => createSecretKey(secret, 'utf8')));
  const sdkVerify: Op = () => verifySignature(body, header, item.receiver);
  const sdkConstruct: Op = () => constructEvent(body, header, item.receiver);
  const edgeConstruct: AsyncOp = () => constructEventAsync(body, header, item.receiver);

  const runners = [
    syncRunner('raw HMAC', raw),
    syncRunner('raw HMAC + JSON.parse', rawAndParse),
    syncRunner('verifySignature', sdkVerify),
    syncRunner('constructEvent', sdkConstruct),
    asyncRunner('constructEventAsync (edge)', edgeConstruct),
    syncRunner('raw HMAC, KeyObject made once', rawPrepared),
  ];
  const names = runners.map((runner) => runner.name);
  // Warm-up: every path optimised before the first counted round.
  for (let i = 0; i < 3000; i++) {
    raw();
    rawAndParse();
    sdkVerify();
    sdkConstruct();
    rawPrepared();
  }
  for (let i = 0; i < 300; i++) await edgeConstruct();

  const ops = await measure(runners);
  const [rawOps, rawParseOps, verifyOps, constructOps, edgeOps, preparedOps] = ops as [
    number[],
    number[],
    number[],
    number[],
    number[],
    number[],
  ];
  const ratioTo = (candidate: number[], baseline: number[]) =>
    candidate.map((v, i) => v / (baseline[i] as number));
  const constructRatio = ratioTo(constructOps, rawOps);
  const row = (name: string, values: number[], ratio: string) => ({
    implementation: name,
    'ops/s (median)': Math.round(median(values)),
    'ops/s (min–max)': spread(values, 0),
    ratio,
  });
  const describe = (candidate: number[], baseline: number[], label: string) => {
    const r = ratioTo(candidate, baseline);
    return `${median(r).toFixed(2)}× of ${label} (${spread(r, 2)})`;
  };
  tables[item.name] = [
    row(names[0] as string, rawOps, '1.00× (baseline)'),
    row(
      names[3] as string,
      constructOps,
      `${describe(constructOps, rawOps, 'raw HMAC')} target ≥ ${TARGET}× ${median(constructRatio) >= TARGET ? 'met' : 'NOT met'}`,
    ),
    row(names[2] as string, verifyOps, describe(verifyOps, rawOps, 'raw HMAC')),
    row(names[5] as string, preparedOps, describe(preparedOps, rawOps, 'raw HMAC')),
    row(
      `${names[2]} vs KeyObject made once`,
      verifyOps,
      describe(verifyOps, preparedOps, 'raw HMAC, KeyObject made once'),
    ),
    row(names[1] as string, rawParseOps, describe(rawParseOps, rawOps, 'raw HMAC')),
    row(
      `${names[3]} vs raw + parse`,
      constructOps,
      describe(constructOps, rawParseOps, 'raw HMAC + JSON.parse'),
    ),
    row(names[4] as string, edgeOps, describe(edgeOps, rawOps, 'raw HMAC')),
  ];
  summary.push({
    case: item.name,
    ratio: median(constructRatio),
    spread: spread(constructRatio, 2),
    baseline: median(rawOps),
    ceiling: median(ratioTo(rawParseOps, rawOps)),
    ofCeiling: median(ratioTo(constructOps, rawParseOps)),
    verification: median(ratioTo(verifyOps, rawOps)),
    verificationSpread: spread(ratioTo(verifyOps, rawOps), 2),
  });
}

console.log(
  `\nWebhook verification, 1 KB session.successful body as a Buffer, header from the service's signer` +
    `\n(${ROUNDS} rounds, each of ${SLICES} interleaved slices per implementation: ${SYNC_BATCH} calls, ` +
    `${ASYNC_BATCH} for the async edge; node ${process.version})`,
);
for (const [name, rows] of Object.entries(tables)) {
  console.log(`\n${name}`);
  console.table(rows);
}
console.log('\nverifySignature / raw node:crypto HMAC-SHA256 (1 KB), median of rounds (spread):');
for (const { case: name, verification, verificationSpread } of summary) {
  console.log(
    `  ${name.padEnd(46)} ${verification.toFixed(2)}× (${verificationSpread})  target ≥ ${TARGET}×  ${verification >= TARGET ? 'met' : 'NOT met'}`,
  );
}
console.log('\nconstructEvent / raw node:crypto HMAC-SHA256 (1 KB), median of rounds (spread):');
for (const { case: name, ratio, spread: range, ceiling } of summary) {
  console.log(
    `  ${name.padEnd(46)} ${ratio.toFixed(2)}× (${range})  target ≥ ${TARGET}×  ${ratio >= TARGET ? 'met' : 'NOT met'}` +
      `  (ceiling, raw HMAC + JSON.parse: ${ceiling.toFixed(2)}×)`,
  );
}
for (const { case: name, verification, verificationSpread, baseline } of summary) {
  reportTarget({
    measure: `constructEvent's verification (verifySignature) vs raw node:crypto HMAC-SHA256, 1 KB (${name})`,
    figure: `${verification.toFixed(2)}× (rounds ${verificationSpread})`,
    baseline: `raw HMAC ${Math.round(baseline).toLocaleString('en')} ops/s`,
    target: `≥ ${TARGET}×`,
    met: verification >= TARGET,
  });
}
// The ceiling: constructEvent returns the parsed event, so it does at least what the baseline does plus one
// JSON.parse of the body. Where that parse alone costs more than 0.18× of the HMAC, 0.85× cannot be reached by
// any verifier that parses, however lean; the figure shows how close this one comes to the most it could.
for (const { case: name, ratio, spread: range, baseline, ceiling, ofCeiling } of summary) {
  reportTarget({
    measure: `constructEvent vs raw node:crypto HMAC-SHA256, 1 KB (${name})`,
    figure: `${ratio.toFixed(2)}× (rounds ${range}; ceiling for any verifier that parses, raw HMAC + JSON.parse: ${ceiling.toFixed(2)}×, of which it reaches ${ofCeiling.toFixed(2)}×)`,
    baseline: `raw HMAC ${Math.round(baseline).toLocaleString('en')} ops/s`,
    target: `≥ ${TARGET}×`,
    met: ratio >= TARGET,
  });
}
