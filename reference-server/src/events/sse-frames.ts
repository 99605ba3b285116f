import type { ServerResponse } from 'node:http';
import { PUSH_RETRY_MS, type StatusMessage } from '@servicepay/node/protocol';

/**
 * One SSE frame: `id:`, `event: status`, `data:` (one line of JSON), blank line.
 *
 * @example
 * res.write(statusFrame(update.seq, update.message));
 */
export const statusFrame = (seq: number, message: StatusMessage): string =>
  `id: ${seq}\nevent: status\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * What every stream opens with, before its first message: the `retry:` field, so a client that loses the
 * stream reconnects after the service's interval (`PUSH_RETRY_MS`) rather than its own default.
 *
 * @example
 * res.write(RETRY_FRAME + statusFrame(update.seq, update.message));
 */
export const RETRY_FRAME = `retry: ${PUSH_RETRY_MS}\n\n`;

/**
 * The comment line a stream gets when it has been quiet for a heartbeat interval; SSE clients ignore it.
 *
 * @example
 * res.write(HEARTBEAT_FRAME);
 */
export const HEARTBEAT_FRAME = ': heartbeat\n\n';

/**
 * The head of a push stream (a `HEAD` on the route answers the same): no caching or transforming by proxies,
 * no buffering by nginx (`x-accel-buffering`).
 *
 * @example
 * res.writeHead(200, STREAM_HEADERS);
 */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * Writes a stream's head and its first frames (after the `retry:` field), and ends the response at once when
 * the last of them was terminal. A stream that stays open lets go of its copy of the head (`releaseSentHead`).
 *
 * @example
 * writeOpening(res, statusFrame(0, message), false); // open: live frames follow
 */
export function writeOpening(res: ServerResponse, frames: string, terminal: boolean): void {
  res.writeHead(200, STREAM_HEADERS);
  if (terminal) {
    res.end(RETRY_FRAME + frames);
    return;
  }
  res.write(RETRY_FRAME + frames);
  releaseSentHead(res);
}

/** Node's own name for the headers a response holds until they are sent (and, without this, after). */
let outHeaders: symbol | undefined | null = null;

/**
 * Lets go of the copies of the response head that Node keeps for the whole life of a response, once it is
 * sent (measured per open stream with heap snapshots, bench/support/push-heap.ts):
 * - the head as written, a string built by `+=`, one rope node per piece (about 1.5 KB): reading one
 *   character flattens it in place into one string of ~300 bytes;
 * - the header table behind `getHeader` (about 0.9 KB): nothing reads it once the head is out (`setHeader`
 *   throws from then on, and `getHeader` answers as for a response that set none). Found by its symbol's
 *   name; if a Node version names it otherwise, it is simply kept.
 */
function releaseSentHead(res: ServerResponse): void {
  if (!res.headersSent) return;
  const head = (res as ServerResponse & { _header?: unknown })._header;
  if (typeof head === 'string') head.charCodeAt(0);
  if (outHeaders === null) {
    outHeaders = Object.getOwnPropertySymbols(res).find((key) => key.description === 'kOutHeaders');
  }
  if (outHeaders !== undefined) (res as unknown as Record<symbol, unknown>)[outHeaders] = null;
}
