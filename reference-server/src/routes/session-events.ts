import { StatusMessageSchema } from '@servicepay/node/protocol';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { HttpError } from '../errors.ts';
import { STREAM_HEADERS } from '../events/push-streams.ts';
import { addressKey } from '../middleware/rate-limit.ts';
import { setRequestContext } from '../middleware/request-context.ts';
import { defineOperation, type HeaderSpec } from './operation.ts';

/**
 * What `HEAD` answers: the stream's head without its `Connection: keep-alive`, which is there for the stream that
 * stays open. A `HEAD` ends at once, so its connection is whatever the client asked for: a `Connection: close` is
 * honoured (the stream's header overrode it, and held the socket for the keep-alive timeout).
 */
const HEAD_HEADERS = Object.fromEntries(
  Object.entries(STREAM_HEADERS).filter(([name]) => name !== 'connection'),
);

const NO_HEADERS: Request['headers'] = Object.freeze({});
const NO_RAW_HEADERS: string[] = Object.freeze([]) as unknown as string[];

/**
 * What the way to the route left on the request and response that an open stream, which may live for an
 * hour beside ten thousand others, never reads again: the caller (its session record), the router's
 * continuation (its closures hold the whole middleware chain), the parsed URL, the route params and the
 * request headers (twice: raw and parsed; a browser sends a dozen). About 2 KB a stream, measured with
 * bench/support/push-heap.ts.
 */
function releaseRequestChain(req: Request, res: Response): void {
  setRequestContext(res, { caller: undefined });
  const chain = req as unknown as Record<string, unknown>;
  chain.next = undefined;
  chain._parsedUrl = undefined;
  chain.params = undefined;
  req.headers = NO_HEADERS;
  req.rawHeaders = NO_RAW_HEADERS;
}

/**
 * One message of the push stream `GET /api/widget/sessions/{id}/events` as its server-sent event: `id:` the
 * transition's sequence number (what `Last-Event-ID` resumes after), `event: status`, and `data:` a
 * `StatusMessage` as JSON. The stream opens with `retry: 1000` and sends `: heartbeat` comments between.
 *
 * @example
 * StatusEventSchema.parse({ id: '7', event: 'status', data: message });
 */
export const StatusEventSchema = z.object({
  id: z.string().regex(/^\d{1,15}$/),
  event: z.literal('status'),
  data: StatusMessageSchema,
});

/** The push stream's resume point, on its GET and its HEAD. */
const lastEventIdHeader: HeaderSpec = {
  name: 'Last-Event-ID',
  description: 'Resume after this event id.',
  required: false,
  schema: { type: 'string', pattern: '^\\d{1,15}$' },
};

/** `Last-Event-ID`, when sent: the sequence number to resume after; 400 for anything but one. */
function lastEventIdOf(req: Request): number | undefined {
  const header = req.get('Last-Event-ID');
  if (header === undefined || header.trim() === '') return undefined;
  if (!/^\d{1,15}$/.test(header.trim())) {
    throw new HttpError(400, 'validation_failed', 'Last-Event-ID must be an event id from this stream.', [
      { path: 'Last-Event-ID', message: 'must be a non-negative integer' },
    ]);
  }
  return Number(header.trim());
}

/**
 * `GET /api/widget/sessions/{id}/events`: the checkout's real-time push, as server-sent events. The widget
 * token goes in `Authorization: Bearer wt_…`, never in the URL (a URL carrying one is refused with 400, before
 * anything else, as on every widget-token route). `Last-Event-ID` resumes after a transition the client
 * already has. One token holds at most `maxPerToken` open streams and one address `maxPerAddress` (429 past
 * either); `HEAD` answers the stream's headers and ends, holding nothing open.
 *
 * @example
 * mountOperations(app, SESSION_EVENT_OPERATIONS, deps); // as createApp mounts every table
 */
export const SESSION_EVENT_OPERATIONS = [
  defineOperation({
    method: 'get',
    path: '/api/widget/sessions/{id}/events',
    operationId: 'sessionEvents',
    tag: 'Checkout',
    summary: "The checkout's real-time push (server-sent events)",
    description:
      'Each message is a `StatusEvent`: `event: status`, `id:` its sequence number, `data:` a `StatusMessage` as JSON; the first is the current state, and the stream ends after a terminal status.',
    auth: 'widgetToken',
    headers: [lastEventIdHeader],
    success: { 200: { kind: 'event-stream', description: 'A text/event-stream of status messages.' } },
    errors: [403, 404],
    handler: async ({ caller, req, res }, { pushStreams: streams }) => {
      const lastEventId = lastEventIdOf(req);
      const owner = { token: caller.tokenHash, address: addressKey(req) };
      const cap = streams.capExceeded(owner);
      if (cap !== null) {
        const limit = cap === 'token' ? streams.caps.perToken : streams.caps.perAddress;
        throw new HttpError(
          429,
          'rate_limited',
          cap === 'token'
            ? `This checkout already has ${limit} open streams; close one before opening another.`
            : `This address already has ${limit} open streams; close one before opening another.`,
          undefined,
          // A stream frees its place when it closes, not at a time we can name: retry after a short wait.
          { 'Retry-After': '5' },
        );
      }
      await streams.open(res, caller.session.id, lastEventId, owner);
      if (!res.writableEnded) releaseRequestChain(req, res);
      return undefined;
    },
  }),
  // HEAD asks what a GET would answer: the headers, then the end. It never subscribes.
  defineOperation({
    method: 'head',
    path: '/api/widget/sessions/{id}/events',
    operationId: 'sessionEventsHead',
    tag: 'Checkout',
    summary: "The push stream's head: its headers, without opening it",
    description:
      "Checks the token and `Last-Event-ID` as `GET` does and answers the stream's headers, then ends: nothing is held open.",
    auth: 'widgetToken',
    headers: [lastEventIdHeader],
    success: {
      200: { kind: 'stream-head', description: 'The headers the stream would open with; no body.' },
    },
    errors: [403, 404],
    handler: ({ req, res }) => {
      lastEventIdOf(req);
      res.writeHead(200, HEAD_HEADERS);
      res.end();
      return undefined;
    },
  }),
];
