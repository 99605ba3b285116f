import { once } from 'node:events';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

// Real loopback sockets for the per-address connection caps: 127.0.0.1 and 127.0.0.2 are two addresses of this
// machine (all of 127/8 is), so one can hold or flood connections while the other is served.

/**
 * An idle connection: `answer()` is what the server wrote on it so far; `closed` resolves once it closed, and
 * `isClosed()` says whether it has (for counting a flood's refused connections).
 */
export interface IdleConnection {
  socket: Socket;
  answer: () => string;
  closed: Promise<unknown>;
  isClosed: () => boolean;
}

/**
 * Connections a test opens and sends nothing on (unless it writes itself), all destroyed by `destroyAll`.
 *
 * @example
 * const connections = idleConnections();
 * const held = await connections.open(port, '127.0.0.1');
 * afterEach(() => connections.destroyAll());
 */
export function idleConnections() {
  const sockets: Socket[] = [];
  return {
    /** An idle connection to `127.0.0.1:port` from `localAddress`: resolves once connected. */
    async open(port: number, localAddress: string): Promise<IdleConnection> {
      const socket = connect({ host: '127.0.0.1', port, localAddress });
      sockets.push(socket);
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      socket.on('error', () => {});
      let isClosed = false;
      const closed = once(socket, 'close').then(() => {
        isClosed = true;
      });
      await once(socket, 'connect');
      return { socket, answer: () => answer, closed, isClosed: () => isClosed };
    },
    destroyAll(): void {
      for (const socket of sockets.splice(0)) socket.destroy();
    },
  };
}

/**
 * One request from `localAddress` on a connection of its own; answers the status and body (status 0: failed
 * or timed out, so a hang shows as 0 rather than as a test timeout).
 *
 * @example
 * expect(await requestFrom('127.0.0.2', server.baseUrl)).toEqual({ status: 200, text: 'served' });
 */
export function requestFrom(
  localAddress: string,
  url: string,
  options: {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    timeoutMs?: number;
  } = {},
): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const req = request(
      {
        host: hostname,
        port,
        localAddress,
        agent: false,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: options.headers ?? {},
        timeout: options.timeoutMs ?? 20_000,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', () => resolve({ status: 0, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(options.body);
  });
}

/**
 * Checks the page a widget host writes to a connection it refuses (a cap reached), as written on the wire: 503,
 * `Retry-After: 1`, HTML, not cached, the connection closed, a `Content-Length` that is the whole body. Returns
 * the body, whose sentence says which cap refused it.
 *
 * @example
 * expect(expectRefusalPage(socket.answer())).toContain('This network has too many connections');
 */
export function expectRefusalPage(answer: string): string {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
  expect(head).toMatch(/\r\nRetry-After: 1\r\n/);
  expect(head).toMatch(/\r\nContent-Type: text\/html; charset=utf-8\r\n/);
  expect(head).toMatch(/\r\nCache-Control: no-store\r\n/);
  expect(head).toMatch(/\r\nConnection: close$/);
  const length = /\r\nContent-Length: (\d+)\r\n/.exec(head)?.[1];
  expect(Number(length)).toBe(Buffer.byteLength(body));
  expect(body).toContain('<h1>Too many connections</h1>');
  return body;
}
