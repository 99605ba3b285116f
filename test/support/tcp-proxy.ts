import { connect, createServer, type Socket } from 'node:net';

/** What the proxy does to the answer of one connection: pass it, or stop after so many bytes of its body. */
export type ProxyPlan =
  | { kind: 'pass' }
  /** Forwards the answer's head and `bodyBytes` bytes of its body (as sent: chunk sizes included), then closes. */
  | { kind: 'cut'; bodyBytes: number }
  /** Forwards the head and `bodyBytes` bytes of the body, then forwards nothing more, keeping the connection open. */
  | { kind: 'stall'; bodyBytes: number };

export interface TcpProxy {
  /** `http://127.0.0.1:<port>`: give it to a client as its base URL. */
  url: string;
  /** The head of every request that came through (request line and headers), in order. */
  requests: string[];
  close(): Promise<void>;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * A real TCP proxy on loopback in front of a real server: it forwards bytes both ways, and for the connections
 * `plan` says, stops forwarding the answer part way, as a network or a load balancer that drops a connection
 * would. The client sees a real connection close (or go silent) at exactly that byte; the server sees its
 * client go away. `plan` is asked once per connection, with its number (0 first).
 *
 * @example
 * const proxy = await startTcpProxy(server.baseUrl, (n) => (n === 0 ? { kind: 'cut', bodyBytes: 100 } : { kind: 'pass' }));
 */
export async function startTcpProxy(
  target: string,
  plan: (connection: number) => ProxyPlan,
): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    const what = plan(connections++);
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    let request = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      request = Buffer.concat([request, chunk]);
      const end = request.indexOf(HEAD_END);
      if (end >= 0) {
        requests.push(request.subarray(0, end).toString('latin1'));
        request = request.subarray(end + HEAD_END.length);
      }
      upstream.write(chunk);
    });
    let head = Buffer.alloc(0);
    let bodySent = -1; // -1 while the head is still coming
    let stopped = false;
    upstream.on('data', (chunk: Buffer) => {
      if (stopped) return;
      if (what.kind === 'pass') return void client.write(chunk);
      let body = chunk;
      if (bodySent < 0) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf(HEAD_END);
        if (end < 0) return;
        client.write(head.subarray(0, end + HEAD_END.length));
        body = head.subarray(end + HEAD_END.length);
        bodySent = 0;
      }
      const room = what.bodyBytes - bodySent;
      client.write(body.subarray(0, room));
      bodySent += Math.min(room, body.length);
      if (bodySent < what.bodyBytes) return;
      stopped = true;
      if (what.kind === 'cut') {
        // The bytes written so far go out, then the connection ends without chunked encoding's last chunk.
        client.end();
        upstream.destroy();
      } else upstream.pause();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
