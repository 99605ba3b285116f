import type { Dispatcher } from 'undici';
import type { FetchLike } from '../options.ts';
import { normaliseHeaders } from './senders.ts';

// How a download goes on the wire: the answer's status and headers, and its body as chunks read on demand (so
// a client that reads slowly makes the service send slowly). `stream-transport.ts` decides retries and errors.

/** A download's answer once its headers came: the body not yet read. */
export interface StreamedAnswer {
  statusCode: number;
  headers: Record<string, string>;
  /** The body's chunks, read one `next()` at a time; `return()` ends the exchange (closing its connection). */
  chunks: AsyncIterator<Uint8Array, undefined>;
}

/** Sends one GET for a download; `signal` ends it, before or after its headers. */
export type StreamSender = (
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<StreamedAnswer>;

/**
 * Settles with `pending`, or rejects with the signal's reason as soon as it aborts. undici answers an abort
 * only once the request is on a connection, so a timeout while the pool is still connecting would otherwise
 * wait for the connect (see docs/decisions/sdk.md, "Transport"). A late answer is closed.
 */
const untilAborted = <T>(pending: Promise<T>, signal: AbortSignal, close: (late: T) => void): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      pending.then(close, () => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });

/**
 * Sends through the dispatcher's `request`, whose body is a stream that keeps to its reader's pace. Unlike the
 * JSON calls (senders.ts) the response stream is what is wanted here. undici's own body timeout is off: the
 * transport times the waits for data itself, and only while the reader is asking for more.
 */
export const undiciStreamSender =
  (dispatcher: () => Promise<Dispatcher> | Dispatcher): StreamSender =>
  async (url, { headers, signal }) => {
    const target = await dispatcher();
    signal.throwIfAborted();
    const { origin, pathname, search } = new URL(url);
    const answer = await untilAborted(
      target.request({ origin, path: pathname + search, method: 'GET', headers, signal, bodyTimeout: 0 }),
      signal,
      (late) => late.body.destroy(),
    );
    return {
      statusCode: answer.statusCode,
      headers: normaliseHeaders(answer.headers),
      chunks: answer.body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array, undefined>,
    };
  };

const NO_CHUNKS: AsyncIterator<Uint8Array, undefined> = {
  next: async () => ({ done: true, value: undefined }),
};

/** Sends through the `fetch` given (`ServicePayOptions.fetch`): its body's reader, read on demand. */
export const fetchStreamSender =
  (fetchImpl: FetchLike): StreamSender =>
  async (url, { headers, signal }) => {
    const answer = await fetchImpl(url, { method: 'GET', headers, signal });
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
    const reader = answer.body?.getReader();
    const chunks: AsyncIterator<Uint8Array, undefined> =
      reader === undefined
        ? NO_CHUNKS
        : {
            next: async () => {
              const read = await reader.read();
              return read.done ? { done: true, value: undefined } : { done: false, value: read.value };
            },
            return: async () => {
              await reader.cancel().catch(() => undefined);
              return { done: true, value: undefined };
            },
          };
    return { statusCode: answer.status, headers: out, chunks };
  };
