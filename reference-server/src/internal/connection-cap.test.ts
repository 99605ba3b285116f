import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { idleConnections } from '../../../test/support/loopback-connections.ts';
import {
  capConnections,
  capConnectionsPerAddress,
  refusedByConnectionCap,
  TOTAL_CAP_MARGIN,
} from './connection-cap.ts';

// `capConnections` on a bare HTTP server and real loopback sockets: what the widget hosts build on
// (test/api/widget-host-limits.test.ts holds the hosts themselves). Each refusal is recorded by the test's own
// `refuse`, so what is counted is exactly which sockets each cap answered.

let server: Server | undefined;
const connections = idleConnections();

afterEach(async () => {
  connections.destroyAll();
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  }
});

async function listen(setUp: (server: Server) => void): Promise<number> {
  server = createServer((_req, res) => res.end('served'));
  setUp(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

describe('capConnections (a total, every peer counted)', () => {
  it('answers the connection past the total with `refuse` and closes it; a closed one frees a place', async () => {
    const refused: string[] = [];
    const port = await listen((listening) =>
      capConnections(listening, {
        maxConnections: 2,
        refuse: (socket) => {
          refused.push(socket.remoteAddress ?? '');
          socket.end('full');
        },
      }),
    );
    const held = [await connections.open(port, '127.0.0.41'), await connections.open(port, '127.0.0.42')];
    const over = await connections.open(port, '127.0.0.43');
    await over.closed;
    expect(over.answer()).toBe('full');
    expect(refused).toEqual(['127.0.0.43']);
    expect(held.map((connection) => connection.answer())).toEqual(['', '']);
    held[0]?.socket.destroy();
    await held[0]?.closed;
    // Once the server has seen it close, the next connection is held, not refused.
    await expect
      .poll(async () => {
        const next = await connections.open(port, '127.0.0.44');
        await new Promise((resolve) => setTimeout(resolve, 50));
        const taken = !next.socket.destroyed && next.answer() === '';
        next.socket.destroy();
        await next.closed;
        return taken;
      })
      .toBe(true);
  });

  it(`past the total + ${TOTAL_CAP_MARGIN}, Node drops a connection before a byte: no answer, no 'connection' for it`, async () => {
    let answered = 0;
    const port = await listen((listening) =>
      capConnections(listening, {
        maxConnections: 1,
        // Holds the socket open (a refusal still on its way out), so the margin fills.
        refuse: () => {
          answered += 1;
        },
      }),
    );
    expect(server?.maxConnections).toBe(1 + TOTAL_CAP_MARGIN);
    for (let i = 0; i < 1 + TOTAL_CAP_MARGIN; i++) await connections.open(port, '127.0.0.45');
    await expect.poll(() => answered).toBe(TOTAL_CAP_MARGIN);
    const dropped = await connections.open(port, '127.0.0.45');
    await dropped.closed;
    expect(dropped.answer()).toBe('');
    expect(answered).toBe(TOTAL_CAP_MARGIN);
  });

  it('with the per-address cap too, a connection over both is answered once (by the cap that came first)', async () => {
    const answers: string[] = [];
    const refuser = (name: string) => (socket: Socket) => {
      answers.push(name);
      socket.end(name);
    };
    const port = await listen((listening) => {
      capConnections(listening, { maxConnections: 2, refuse: refuser('total') });
      capConnectionsPerAddress(listening, { maxConnectionsPerAddress: 2, refuse: refuser('address') });
    });
    await connections.open(port, '127.0.0.46');
    await connections.open(port, '127.0.0.46');
    const over = await connections.open(port, '127.0.0.46');
    await over.closed;
    expect(answers).toEqual(['total']);
    expect(over.answer()).toBe('total');
  });

  it('marks a refused socket, so a request already on it gets no work done (`refusedByConnectionCap`)', async () => {
    const handled: boolean[] = [];
    const port = await listen((listening) => {
      // Holds the refused socket open, so its request reaches the handler.
      capConnections(listening, { maxConnections: 1, refuse: () => {} });
      listening.on('request', (req) => handled.push(refusedByConnectionCap(req.socket)));
    });
    const held = await connections.open(port, '127.0.0.47');
    const over = await connections.open(port, '127.0.0.47');
    held.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await expect.poll(() => handled).toEqual([false]);
    over.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await expect.poll(() => handled).toEqual([false, true]);
  });
});
