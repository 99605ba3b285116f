import type { Dispatcher } from 'undici';
import type { FetchLike } from '../options.ts';
import type { Method } from './transport.ts';

// How one request goes on the wire: through undici's dispatcher, or through the `fetch` given. The transport
// (`http-transport.ts`) decides timeouts, retries and errors; a sender only sends and gathers the answer.

/** One HTTP exchange, whichever way it was sent. */
export interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  text: string;
}

/** One request on its way: its answer, and how to end it early (the answer then rejects with `reason`). */
export interface Exchange {
  response: Promise<RawResponse>;
  abort(reason: unknown): void;
}

/** Sends one request and hands back its exchange at once: what `undiciSender` and `fetchSender` make. */
export type Sender = (
  url: string,
  init: { method: Method; headers: Record<string, string>; body: string | undefined },
) => Exchange;

const firstHeader = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** Response headers as one string each, names lower-cased. */
export const normaliseHeaders = (
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const first = firstHeader(value);
    if (first !== undefined) out[name.toLowerCase()] = first;
  }
  return out;
};

/** The body as text, as undici's `body.text()` reads it: UTF-8, a leading byte-order mark dropped. */
export const utf8Text = (chunks: Buffer[]): string => {
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const start = bytes.length > 2 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.toString('utf8', start);
};

let undiciModule: Promise<typeof import('undici')> | undefined;
/**
 * undici, imported on first use so that a client given `fetch` never loads it, and once: an `import()` per
 * request is a module-loader round trip each time (under a loader such as tsx, a message to its worker
 * thread), which made `retrieve` 3× slower than a raw `undici.request` (bench/sdk-request-overhead.ts).
 */
export const loadUndici = (): Promise<typeof import('undici')> => {
  if (undiciModule === undefined) {
    const loading = import('undici');
    // A failed load is not kept, so the next request tries again.
    loading.catch(() => {
      if (undiciModule === loading) undiciModule = undefined;
    });
    undiciModule = loading;
  }
  return undiciModule;
};

/**
 * Sends through the dispatcher's own `dispatch`, with a handler that gathers the answer: the exchange undici's
 * `request` + `body.text()` make, without the response stream, the async resource and the `AbortSignal` (and
 * its listener) those build for every request. They were most of what a call cost beyond a raw request
 * (`bench/sdk-request-overhead.ts`: 1.40x a raw `request` with them, issue 12). The timeout and the caller's
 * signal end the exchange through the handler's controller instead.
 */
export const undiciSender = (dispatcher: () => Promise<Dispatcher> | Dispatcher): Sender => {
  return (url, { method, headers, body }) => {
    let controller: Dispatcher.DispatchController | undefined;
    let abortedWith: { reason: unknown } | undefined;
    // Settled from the handler below, or at once by `abort` while the request is not yet on a connection.
    let resolve!: (answer: RawResponse) => void;
    let reject!: (error: unknown) => void;
    const response = new Promise<RawResponse>((settleWith, failWith) => {
      resolve = settleWith;
      reject = failWith;
    });
    const send = async (): Promise<void> => {
      const target = await dispatcher();
      if (abortedWith) return;
      const { origin, pathname, search } = new URL(url);
      const chunks: Buffer[] = [];
      let statusCode = 0;
      let answerHeaders: Record<string, string> = {};
      target.dispatch(
        { origin, path: pathname + search, method, headers, body: body ?? null },
        {
          onRequestStart(started) {
            // Ended before the request was on a connection: the call has already rejected; drop the request.
            if (abortedWith) started.abort(abortedWith.reason as Error);
            else controller = started;
          },
          onResponseStart(_controller, status, responseHeaders) {
            // An informational 1xx (a proxy's 103) may come first: the final answer's start replaces it.
            statusCode = status;
            answerHeaders = normaliseHeaders(responseHeaders);
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve({
              statusCode,
              headers: answerHeaders,
              text: chunks.length === 0 ? '' : utf8Text(chunks),
            });
          },
          onResponseError(_controller, error) {
            reject(error);
          },
        },
      );
    };
    send().catch(reject);
    return {
      response,
      abort(reason) {
        if (abortedWith) return;
        abortedWith = { reason };
        // On a connection: undici ends it and answers onResponseError with the reason. Not yet (the agent is
        // loading, or the pool has not connected): nothing would answer until it did, so the call ends here.
        if (controller) controller.abort(reason as Error);
        else reject(reason);
      },
    };
  };
};

/** Sends through the `fetch` given (`ServicePayOptions.fetch`); the abort goes to its signal. */
export const fetchSender = (fetchImpl: FetchLike): Sender => {
  return (url, { method, headers, body }) => {
    const controller = new AbortController();
    const response = (async () => {
      const answer = await fetchImpl(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: controller.signal,
      });
      const text = await answer.text();
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        out[name.toLowerCase()] = value;
      });
      return { statusCode: answer.status, headers: out, text };
    })();
    return { response, abort: (reason) => controller.abort(reason) };
  };
};
