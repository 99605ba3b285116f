import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PUSH_RETRY_MS, type StatusMessage } from '@servicepay/node/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StatusStream } from '../../widget/src/frame/status-stream.ts';
import { openCheckout } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The widget's push-stream reader against the real reference server: it reconnects on the interval the
// service's `retry:` field gives (docs/protocol.md, "Push stream"), not a default of its own.

describe('StatusStream', () => {
  let server: RunningServer;
  const streams: StatusStream[] = [];

  beforeEach(async () => {
    server = await startServer();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.stop();
    await server.close();
  });

  /** Opens a StatusStream on `url` and resolves with it at its first message. */
  async function firstMessage(url: string, token: string) {
    let stream: StatusStream | undefined;
    const message = await new Promise<StatusMessage>((resolve, reject) => {
      stream = new StatusStream({
        url,
        token,
        onMessage: resolve,
        onState: () => {},
        onRefused: (status) => reject(new Error(`refused ${status}`)),
      });
      streams.push(stream);
      stream.start();
    });
    return { stream: stream as StatusStream, message };
  }

  it("reads the service's retry: from the reference server's push stream", async () => {
    const { keys } = await server.createBusiness();
    const checkout = await openCheckout(server.baseUrl, keys.test.secretKey);
    const url = new URL(`/api/widget/sessions/${checkout.sessionId}/events`, server.baseUrl).href;
    const { stream, message } = await firstMessage(url, checkout.token);
    expect(message.status).toBe('awaiting_payment');
    expect(stream.retryMs).toBe(PUSH_RETRY_MS);
  });

  it('follows another retry: a stream sends (a plain loopback HTTP server standing in for the service)', async () => {
    const open: ServerResponse[] = [];
    const standIn = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`retry: 400\n\nid: 1\nevent: status\ndata: ${JSON.stringify({ status: 'pending' })}\n\n`);
      open.push(res);
    });
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = standIn.address() as AddressInfo;
      const { stream } = await firstMessage(`http://127.0.0.1:${port}/events`, 'wt_x');
      expect(stream.retryMs).toBe(400);
      stream.stop();
    } finally {
      for (const res of open) res.destroy();
      await new Promise((resolve) => standIn.close(resolve));
    }
  });
});
