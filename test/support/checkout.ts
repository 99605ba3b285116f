import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser } from 'eventsource-parser';
import { call } from './api.ts';

// biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted field by field, not typed up front.
type Json = any;

/** Creates a session and bootstraps it: the widget token and the account to pay. */
export async function openCheckout(baseUrl: string, secretKey: string, amount = 50_000) {
  const created = await call(baseUrl, 'POST', '/api/widget/sessions', {
    token: secretKey,
    json: { amount, currency: 'NGN', payer: { name: 'Ada Payer', email: 'ada@example.com' } },
  });
  if (created.status !== 201)
    throw new Error(`session create: ${created.status} ${JSON.stringify(created.body)}`);
  const response = await fetch(new URL('/api/widget/bootstrap', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientSecret: created.body.data.clientSecret }),
  });
  const boot = (await response.json()) as Json;
  if (response.status !== 200) throw new Error(`bootstrap: ${response.status} ${JSON.stringify(boot)}`);
  return {
    sessionId: created.body.data.id as string,
    token: boot.data.token as string,
    accountNumber: boot.data.virtualAccount.accountNumber as string,
    amount,
  };
}

/**
 * A verifier written independently of the service's signer: parses `t=…,v1=…[,v1=…]`, recomputes
 * HMAC-SHA256(secret, "<t>.<raw body>") and compares in constant time.
 */
export function independentlyVerify(rawBody: Buffer, header: string, secret: string): boolean {
  const fields = header.split(',').map((part) => part.split('='));
  const t = fields.find(([k]) => k === 't')?.[1];
  const candidates = fields.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
  if (!t || candidates.length === 0) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  return candidates.some((hex) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export interface Received {
  headers: IncomingMessage['headers'];
  raw: Buffer;
  body: Json;
  at: number;
}

/** A webhook receiver on loopback whose answer the test decides per request. */
export async function startReceiver(
  answer: (received: Received, res: ServerResponse) => void = (_r, res) => res.end('ok'),
): Promise<{ url: string; received: Received[]; server: Server; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const entry = { headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')), at: Date.now() };
      received.push(entry);
      answer(entry, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Reads an SSE response until `until` says stop; returns the parsed frames (comments as `comment`). */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: Json;
  comment?: string;
}

export async function openStream(
  baseUrl: string,
  sessionId: string,
  token: string,
  headers: Record<string, string> = {},
) {
  const controller = new AbortController();
  const response = await fetch(new URL(`/api/widget/sessions/${sessionId}/events`, baseUrl), {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  /** Every `retry:` the stream sent, with how many frames had come before it. */
  const retries: Array<{ ms: number; afterFrames: number }> = [];
  let ended = false;
  const waiters: Array<() => void> = [];
  const notify = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const pump = (async () => {
    if (!response.body) return;
    // eventsource-parser reads the stream as the spec says (CRLF, CR or LF line ends, `data:` with or
    // without a space, multi-line data joined by "\n"), which a hand-split on "\n\n" did not.
    const parser = createParser({
      onEvent: (message) => {
        const frame: SseFrame = {};
        if (message.id !== undefined) frame.id = message.id;
        if (message.event !== undefined) frame.event = message.event;
        try {
          frame.data = JSON.parse(message.data);
        } catch {
          frame.data = message.data;
        }
        frames.push(frame);
      },
      onRetry: (ms) => {
        retries.push({ ms, afterFrames: frames.length });
      },
      onComment: (comment) => {
        frames.push({ comment: comment.trim() });
      },
    });
    const decoder = new TextDecoder();
    try {
      // Read through a reader: DOM's ReadableStream typing has no async iterator, Node's does.
      const reader = response.body.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        parser.feed(decoder.decode(read.value as Uint8Array, { stream: true }));
        notify();
      }
    } catch {
      // aborted by the test
    }
    ended = true;
    notify();
  })();
  return {
    response,
    frames,
    retries,
    get ended() {
      return ended;
    },
    /** Resolves once `predicate` holds on the frames (or the stream ended: then it rejects). */
    async waitFor(predicate: (frames: SseFrame[]) => boolean): Promise<void> {
      while (!predicate(frames)) {
        if (ended) throw new Error(`stream ended first; frames: ${JSON.stringify(frames)}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    async closed(): Promise<void> {
      await pump;
    },
    abort() {
      controller.abort();
    },
  };
}
