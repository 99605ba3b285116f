/**
 * What each open push stream holds on the server's heap: the service runs in this process (it is what is
 * looked at), the streams are opened by support/push-clients.ts in a child, and two heap snapshots (before
 * and after) are compared. Prints, per open stream, the growth by kind of heap object, the largest first, and
 * with `--retainers kind,kind` what holds the new objects of those kinds (by the edge that points at them).
 *
 *   node --expose-gc --import tsx bench/support/push-heap.ts [--streams 2000] [--retainers "DescriptorArray,Object"]
 *
 * Run with few streams (1,000-2,000): a snapshot of a big heap takes long, and the figures are per stream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getHeapSnapshot } from 'node:v8';
import { CreateSessionParamsSchema } from '@servicepay/node/protocol';
import { createBusiness, createService, silentLogger } from '../../reference-server/src/index.ts';
import { forkChild } from './push-ipc.ts';

const { values } = parseArgs({
  options: { streams: { type: 'string', default: '2000' }, retainers: { type: 'string', default: '' } },
});
const count = Number(values.streams);
const wanted = String(values.retainers)
  .split(',')
  .filter((name) => name !== '');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

type Snapshot = {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
};

async function snapshot(): Promise<Snapshot> {
  gc?.();
  gc?.();
  const chunks: Buffer[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Snapshot;
}

/** A node's kind: its type, and its name for objects and closures (strings are all one kind). */
function kindOf(heap: Snapshot, at: number): string {
  const type = heap.snapshot.meta.node_types[0][heap.nodes[at] ?? 0] ?? '?';
  if (type.includes('string')) return `(${type})`;
  return `${type} ${heap.strings[heap.nodes[at + 1] ?? 0] ?? ''}`.slice(0, 70);
}

const folder = mkdtempSync(join(tmpdir(), 'servicepay-bench-heap-'));
const service = createService(
  {
    dbPath: join(folder, 'servicepay.db'),
    port: 0,
    testWidgetPort: 0,
    liveWidgetPort: 0,
    rateLimit: { perMinute: 10_000_000, widgetPerMinutePerAddress: 10_000_000, streamsPerAddress: 1_000_000 },
    maxConnections: 100_000,
    maxConnectionsPerAddress: 100_000,
  },
  { logger: silentLogger },
);
const { url } = await service.start();
const created = await createBusiness(service.deps.store, 'Heap Shop', false, Date.now());
const business = await service.deps.store.businesses.find(created.business.id);
if (!business) throw new Error('no business');
const params = CreateSessionParamsSchema.parse({
  amount: 10_000,
  currency: 'NGN',
  payer: { name: 'Ada', email: 'ada@example.com' },
});
const sessions: Array<{ sessionId: string; token: string }> = [];
for (let done = 0; done < count; done += 500) {
  const made = await Promise.all(
    Array.from({ length: Math.min(500, count - done) }, () =>
      service.deps.sessions.create({ kind: 'secret', business, environment: 'test' }, params),
    ),
  );
  for (const boot of await Promise.all(made.map((m) => service.deps.sessions.bootstrap(m.clientSecret)))) {
    sessions.push({ sessionId: boot.session.id, token: boot.token });
  }
}

/** What the first snapshot is compared by: its node ids (sorted, outside the JS heap) and bytes per kind. */
async function baseline(): Promise<{ known: Uint32Array; kinds: Map<string, number>; fields: number }> {
  const heap = await snapshot();
  const fields = heap.snapshot.meta.node_fields.length;
  const known = new Uint32Array(heap.nodes.length / fields);
  const kinds = new Map<string, number>();
  for (let at = 0, n = 0; at < heap.nodes.length; at += fields, n++) {
    known[n] = heap.nodes[at + 2] ?? 0;
    const kind = kindOf(heap, at);
    kinds.set(kind, (kinds.get(kind) ?? 0) + (heap.nodes[at + 3] ?? 0));
  }
  return { known: known.sort(), kinds, fields };
}
const { known, kinds: kindsBefore, fields } = await baseline();
const isKnown = (id: number): boolean => {
  let low = 0;
  let high = known.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = known[middle] ?? 0;
    if (value === id) return true;
    if (value < id) low = middle + 1;
    else high = middle - 1;
  }
  return false;
};

const holder = await forkChild('push-clients.ts');
const base = new URL(url);
await holder.ask({ type: 'open', host: base.hostname, port: Number(base.port), sessions });
const after = await snapshot();
const kindsAfter = new Map<string, { bytes: number; count: number }>();
for (let at = 0; at < after.nodes.length; at += fields) {
  const kind = kindOf(after, at);
  const entry = kindsAfter.get(kind) ?? { bytes: 0, count: 0 };
  entry.bytes += after.nodes[at + 3] ?? 0;
  if (!isKnown(after.nodes[at + 2] ?? 0)) entry.count += 1;
  kindsAfter.set(kind, entry);
}
const rows = [...kindsAfter]
  .map(([kind, { bytes, count: made }]) => ({
    kind,
    perStream: (bytes - (kindsBefore.get(kind) ?? 0)) / count,
    made,
  }))
  .filter((row) => Math.abs(row.perStream) >= 16)
  .sort((a, b) => b.perStream - a.perStream);
const total = rows.reduce((sum, row) => sum + row.perStream, 0);
console.log(
  `${service.deps.pushStreams.size} open streams; heap growth per stream ${(total / 1024).toFixed(1)} KB, by kind:`,
);
for (const row of rows.slice(0, 30)) {
  console.log(
    `${row.perStream.toFixed(0).padStart(7)} B  ${(row.made / count).toFixed(2).padStart(6)} new/stream  ${row.kind}`,
  );
}

if (wanted.length > 0) {
  // Who points at the new objects of the wanted kinds, by the pointing object's kind and the edge's name.
  const edgeFields = after.snapshot.meta.edge_fields.length;
  const edgeTypes = after.snapshot.meta.edge_types[0];
  const held = new Map<string, number>();
  const counted = new Set<number>();
  let edge = 0;
  for (let at = 0; at < after.nodes.length; at += fields) {
    const edges = after.nodes[at + 4] ?? 0;
    for (let e = 0; e < edges; e++, edge += edgeFields) {
      const to = after.edges[edge + 2] ?? 0;
      const type = edgeTypes[after.edges[edge] ?? 0] ?? '?';
      if (type === 'weak' || counted.has(to) || isKnown(after.nodes[to + 2] ?? 0)) continue;
      const kind = kindOf(after, to);
      if (!wanted.some((name) => kind.includes(name))) continue;
      counted.add(to);
      const name =
        type === 'element' || type === 'hidden'
          ? `[${after.edges[edge + 1]}]`
          : `.${after.strings[after.edges[edge + 1] ?? 0]}`;
      const key = `${kind}  <-  ${kindOf(after, at)} ${name}`;
      held.set(key, (held.get(key) ?? 0) + (after.nodes[to + 3] ?? 0));
    }
  }
  console.log('\nHeld by (bytes per stream):');
  for (const [key, bytes] of [...held].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    console.log(`${(bytes / count).toFixed(0).padStart(7)} B  ${key}`);
  }
}

await holder.stop();
await service.close();
rmSync(folder, { recursive: true, force: true });
