import { type Request, type Response, Router } from 'express';
import { HttpError } from '../errors.ts';
import { type PushStreams, STREAM_HEADERS } from '../events/push-streams.ts';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { requireWidgetToken, widgetCaller } from '../middleware/authenticate.ts';
import { addressKey } from '../middleware/rate-limit.ts';

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
  res.locals.caller = undefined;
  const chain = req as unknown as Record<string, unknown>;
  chain.next = undefined;
  chain._parsedUrl = undefined;
  chain.params = undefined;
  req.headers = NO_HEADERS;
  req.rawHeaders = NO_RAW_HEADERS;
}

/**
 * `GET /api/widget/sessions/{id}/events`: the checkout's real-time push, as server-sent events. The widget
 * token goes in `Authorization: Bearer wt_…`, never in the URL (a URL carrying one is refused with 400, before
 * anything else). `Last-Event-ID` resumes after a transition the client already has. One token holds at most
 * `maxPerToken` open streams and one address `maxPerAddress` (429 past either); `HEAD` answers the stream's
 * headers and ends, holding nothing open.
 *
 * @example
 * app.use(sessionEventRoutes(auth, pushStreams)); // as createApp mounts it
 */
export function sessionEventRoutes(auth: AuthDeps, streams: PushStreams): Router {
  const router = Router();

  router.get(
    '/api/widget/sessions/:id/events',
    // A URL carrying the token is refused there first, as on every widget-token route.
    requireWidgetToken(auth),
    async (req, res) => {
      const header = req.get('Last-Event-ID');
      let lastEventId: number | undefined;
      if (header !== undefined && header.trim() !== '') {
        if (!/^\d{1,15}$/.test(header.trim())) {
          throw new HttpError(
            400,
            'validation_failed',
            'Last-Event-ID must be an event id from this stream.',
            [{ path: 'Last-Event-ID', message: 'must be a non-negative integer' }],
          );
        }
        lastEventId = Number(header.trim());
      }
      // HEAD asks what a GET would answer: the headers, then the end. It never subscribes.
      if (req.method === 'HEAD') {
        res.writeHead(200, STREAM_HEADERS);
        res.end();
        return;
      }
      const caller = widgetCaller(res);
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
    },
  );

  return router;
}
