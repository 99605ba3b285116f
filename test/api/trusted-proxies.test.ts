import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseTrustedProxies,
  TrustedProxiesError,
} from '../../reference-server/src/internal/trusted-proxies.ts';
import { call } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Several instances behind one load balancer (issue 13): without a trusted proxy every payer would share the
// balancer's address and one per-address budget. With SERVICEPAY_TRUST_PROXY naming the balancer, each payer
// counts by the address the balancer forwarded, and nobody else's X-Forwarded-For is believed.

const BUDGET = 3;

/** A request the checkout's per-address budget counts (a bad client secret: 400 while within budget). */
const bootstrapFrom = (server: RunningServer, forwardedFor?: string) =>
  call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
    json: { clientSecret: 'not-a-secret' },
    ...(forwardedFor ? { headers: { 'x-forwarded-for': forwardedFor } } : {}),
  });

describe('behind a trusted load balancer (here: loopback, where the test connects from)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      trustedProxies: ['loopback'],
      rateLimit: { widgetPerMinutePerAddress: BUDGET },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('each forwarded client address has its own budget', async () => {
    const first: number[] = [];
    for (let i = 0; i <= BUDGET; i++) first.push((await bootstrapFrom(server, '203.0.113.7')).status);
    expect(first).toEqual([400, 400, 400, 429]);
    // Another payer behind the same balancer is not refused for the first one's requests.
    expect((await bootstrapFrom(server, '203.0.113.8')).status).toBe(400);
  });

  it('a client cannot pick its address by writing X-Forwarded-For itself: the hop the balancer added counts', async () => {
    // The balancer appends the address it saw; what the client wrote stands to the left and is not believed.
    const forged = await bootstrapFrom(server, '198.51.100.1, 203.0.113.7');
    expect(forged.status).toBe(429);
    expect(forged.body.meta.code).toBe('rate_limited');
  });
});

describe('the connections one address may hold (maxConnectionsPerAddress)', () => {
  /** `count` connections from loopback that send nothing, then one request on another: its status. */
  async function requestBeside(server: RunningServer, count: number): Promise<number> {
    const { port } = new URL(server.baseUrl);
    const held = await Promise.all(
      Array.from({ length: count }, async () => {
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => {});
        await once(socket, 'connect');
        return socket;
      }),
    );
    try {
      return (await call(server.baseUrl, 'GET', '/health', { headers: { connection: 'close' } })).status;
    } finally {
      for (const socket of held) socket.destroy();
    }
  }

  it('caps a peer that is not a trusted proxy, and never the balancer named in trustedProxies', async () => {
    const capped = await startServer({ maxConnectionsPerAddress: 2 });
    const balanced = await startServer({ maxConnectionsPerAddress: 2, trustedProxies: ['loopback'] });
    try {
      expect(await requestBeside(capped, 2)).toBe(503);
      expect(await requestBeside(balanced, 6)).toBe(200);
    } finally {
      await capped.close();
      await balanced.close();
    }
  });
});

describe('with no trusted proxy (the default)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ rateLimit: { widgetPerMinutePerAddress: BUDGET } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('X-Forwarded-For is ignored: the socket peer is the client, whatever the header says', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= BUDGET; i++)
      statuses.push((await bootstrapFrom(server, `203.0.113.${i + 20}`)).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
  });
});

describe('parseTrustedProxies (SERVICEPAY_TRUST_PROXY, --trust-proxy)', () => {
  it('reads addresses, CIDR ranges and the presets, and nothing when unset or empty', () => {
    expect(parseTrustedProxies(' 10.0.0.0/8, loopback ,192.168.1.10,fd00::/8,uniquelocal ')).toEqual([
      '10.0.0.0/8',
      'loopback',
      '192.168.1.10',
      'fd00::/8',
      'uniquelocal',
    ]);
    expect(parseTrustedProxies(undefined)).toEqual([]);
    expect(parseTrustedProxies('')).toEqual([]);
  });

  it('refuses what would believe any client (true, *, a hop count) and what is not an address', () => {
    for (const value of ['true', '*', '2', 'balancer.internal', '10.0.0.0/33']) {
      expect(() => parseTrustedProxies(value), value).toThrow(TrustedProxiesError);
    }
  });
});
