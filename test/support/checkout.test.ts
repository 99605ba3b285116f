import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openStream } from './checkout.ts';

// The tests' SSE reader against a loopback server that writes the stream byte for byte, in the forms the
// SSE specification allows and the reference server may one day use.

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Serves `chunks` as one event stream, each written separately, then ends it. */
async function serve(chunks: string[]): Promise<string> {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) res.write(chunk);
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('openStream reads server-sent events as the specification writes them (loopback server)', () => {
  it('reads CRLF line ends, data: without a space, multi-line data and comments', async () => {
    const baseUrl = await serve([
      ': heartbeat\r\n\r\n',
      'id: 1\r\nevent: status\r\ndata:{"status":"pending"}\r\n\r\n',
      'id: 2\nevent: status\ndata: {"status":\ndata: "awaiting_payment"}\n\n',
      'id: 3\revent: status\rdata: {"status":"mismatch"}\r\r',
      'id: 4\r\nevent: status\r\ndata: {"status":"successful"}\r\n\r\n',
    ]);
    const stream = await openStream(baseUrl, 'ses_1', 'wt_x');
    await stream.closed();
    expect(stream.frames).toEqual([
      { comment: 'heartbeat' },
      { id: '1', event: 'status', data: { status: 'pending' } },
      { id: '2', event: 'status', data: { status: 'awaiting_payment' } },
      { id: '3', event: 'status', data: { status: 'mismatch' } },
      { id: '4', event: 'status', data: { status: 'successful' } },
    ]);
  });

  it('puts together an event split across chunks, even inside a CRLF', async () => {
    const baseUrl = await serve([
      'id: 7\r',
      '\nevent: sta',
      'tus\r\ndata: {"status":',
      '"expired"}\r\n',
      '\r\n',
    ]);
    const stream = await openStream(baseUrl, 'ses_1', 'wt_x');
    await stream.closed();
    expect(stream.frames).toEqual([{ id: '7', event: 'status', data: { status: 'expired' } }]);
  });
});
