/**
 * The server side of bench/push-latency.ts, in its own process so its memory is measured alone. Talks to the
 * parent over IPC: `{ type: 'sessions', count }` → creates and bootstraps that many sessions (through the
 * service's own code) and answers their tokens; `{ type: 'memory' }` → answers heap and RSS after a full GC.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateSessionParamsSchema } from '@servicepay/node/protocol';
import { createBusiness, createService, silentLogger } from '../../reference-server/src/index.ts';
import type { ApiCaller } from '../../reference-server/src/middleware/authenticate.ts';

const folder = mkdtempSync(join(tmpdir(), 'servicepay-bench-push-'));
const service = createService(
  {
    dbPath: join(folder, 'servicepay.db'),
    port: 0,
    testWidgetPort: 0,
    liveWidgetPort: 0,
    // Every stream of the bench comes from one address: the abuse caps (issue 8) are lifted for it.
    rateLimit: {
      perMinute: 10_000_000,
      widgetPerMinutePerAddress: 10_000_000,
      streamsPerAddress: 1_000_000,
    },
    maxConnections: 100_000,
  },
  { logger: silentLogger },
);
const { url } = await service.start();
const created = createBusiness(service.deps.store, 'Bench Shop', false, Date.now());
const business = service.deps.store.businesses.find(created.business.id);
if (!business) throw new Error('no business');
const caller: ApiCaller = { kind: 'secret', business, environment: 'test' };
const params = CreateSessionParamsSchema.parse({
  amount: 10_000,
  currency: 'NGN',
  payer: { name: 'Ada', email: 'ada@example.com' },
});

const gc = (globalThis as { gc?: () => void }).gc;
const send = (message: unknown) => process.send?.(message);

process.on('message', async (message: { type: string; count?: number }) => {
  if (message.type === 'sessions') {
    const out: Array<{ sessionId: string; token: string; accountNumber: string; amount: number }> = [];
    for (let done = 0; done < (message.count ?? 0); done += 500) {
      const batch = Math.min(500, (message.count ?? 0) - done);
      const made = await Promise.all(
        Array.from({ length: batch }, () => service.deps.sessions.create(caller, params)),
      );
      const booted = await Promise.all(
        made.map((result) => service.deps.sessions.bootstrap(result.clientSecret)),
      );
      for (const boot of booted) {
        out.push({
          sessionId: boot.session.id,
          token: boot.token,
          accountNumber: boot.virtualAccount.accountNumber,
          amount: boot.session.amount,
        });
      }
    }
    send({ type: 'sessions', sessions: out });
  } else if (message.type === 'memory') {
    gc?.();
    gc?.();
    const memory = process.memoryUsage();
    send({ type: 'memory', heapUsed: memory.heapUsed, rss: memory.rss, external: memory.external });
  } else if (message.type === 'stop') {
    await service.close();
    rmSync(folder, { recursive: true, force: true });
    process.exit(0);
  }
});

send({ type: 'ready', url, bankSecret: service.config.bank.secret });
