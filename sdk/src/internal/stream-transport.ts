import type { Readable } from 'node:stream';
import type { ResponseInfo } from '../api-promise.ts';
import { ConnectionError, type ServicePayError, TimeoutError } from '../errors.ts';
import { errorFromResponse, requestIdOf } from './error-from-response.ts';
import { nodeBuiltin } from './node-builtin.ts';
import { parseRetryAfter } from './retry.ts';
import { type Attempt, networkFailure, withRetries } from './retry-loop.ts';
import { utf8Text } from './senders.ts';
import type { StreamedAnswer, StreamSender } from './stream-senders.ts';

/** What one download is sent with: the request, the client's limits, and the sender. */
export interface StreamSettings {
  url: string;
  /** For messages: where the service is (never the URL's query, never a header). */
  baseUrl: string;
  headers: Record<string, string>;
  /** Milliseconds: for the first byte, per attempt; then for each wait on data the reader asked for. */
  timeout: number;
  maxRetries: number;
  maxRetryAfter: number;
  signal: AbortSignal | undefined;
  send: StreamSender;
}

interface Opened {
  body: Readable;
  response: ResponseInfo;
}

/** An error answer's body is a small JSON envelope: read at most this much of it. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

const isSuccess = (status: number) => status >= 200 && status < 300;

/** The error body as text (its first {@link MAX_ERROR_BODY_BYTES}), the exchange ended after it. */
async function errorText(chunks: StreamedAnswer['chunks']): Promise<string> {
  const read: Buffer[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BODY_BYTES) {
      const next = await chunks.next();
      if (next.done) break;
      read.push(Buffer.from(next.value));
      size += next.value.byteLength;
    }
  } finally {
    await chunks.return?.().catch(() => undefined);
  }
  return read.length === 0 ? '' : utf8Text(read);
}

/**
 * Opens a download and answers it once its first bytes came (or it ended with none): an error status, no
 * answer, or a connection lost before that first byte is the SDK's error, retried as every call is (409/4xx
 * never; connection errors, timeouts, 408, 429 and 5xx up to `maxRetries`, `Retry-After` up to
 * `maxRetryAfter`). From the first byte on the body belongs to the caller and is never sent again: the
 * resulting stream starts with those bytes, and a connection that closes before the end of the body (the
 * service's way of saying an export failed half way, docs/protocol.md "Exports") is its `error` event, a
 * `ConnectionError` `stream_interrupted`, so a download cut short can never pass for a whole file.
 *
 * @example
 * const { body, response } = await openStream({ url, baseUrl, headers, timeout, maxRetries, maxRetryAfter, signal, send });
 */
export async function openStream(settings: StreamSettings): Promise<Opened> {
  // Before anything is sent: a runtime without Node's streams cannot take the answer.
  const { Readable } = nodeBuiltin('node:stream');
  const { maxRetries, maxRetryAfter, signal, headers } = settings;
  return withRetries(() => attempt(settings, Readable), { maxRetries, maxRetryAfter, signal, headers });
}

async function attempt(
  settings: StreamSettings,
  Readable: typeof import('node:stream').Readable,
): Promise<Attempt<Opened>> {
  const { url, baseUrl, headers, timeout, signal } = settings;
  // One controller for the whole exchange: the first byte's timer, the waits on data, the caller's signal,
  // and a reader that stops early all end it through this.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`No first byte within ${timeout} ms.`));
  }, timeout);
  const forwardAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', forwardAbort, { once: true });
  let handedOver = false;
  let answer: StreamedAnswer | undefined;
  try {
    answer = await settings.send(url, { headers: { ...headers }, signal: controller.signal });
    const response: ResponseInfo = {
      statusCode: answer.statusCode,
      headers: answer.headers,
      requestId: requestIdOf(answer.headers),
    };
    if (!isSuccess(answer.statusCode)) {
      const text = await errorText(answer.chunks);
      const retryAfterMs = parseRetryAfter(answer.headers['retry-after']);
      const error = errorFromResponse(answer.statusCode, answer.headers, text, retryAfterMs);
      return retryAfterMs === undefined ? { ok: false, error } : { ok: false, error, retryAfterMs };
    }
    const first = await answer.chunks.next();
    clearTimeout(timer);
    handedOver = true;
    const body = Readable.from(
      rest(first.done ? undefined : first.value, answer.chunks, {
        response,
        timeout,
        controller,
        signal,
        done: () => signal?.removeEventListener('abort', forwardAbort),
      }),
      { objectMode: false },
    );
    // A reader that stops before the end (destroy, a failed pipeline) ends the exchange at once, even while a
    // read is pending: the generator's own `return` would wait for that read.
    body.once('close', () => {
      if (!body.readableEnded) controller.abort(new Error('The reader closed the download before its end.'));
    });
    return { ok: true, value: { body, response } };
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    void answer?.chunks.return?.().catch(() => undefined);
    return { ok: false, error: networkFailure(cause, { timedOut, timeout, url, baseUrl }) };
  } finally {
    clearTimeout(timer);
    if (!handedOver) signal?.removeEventListener('abort', forwardAbort);
  }
}

interface BodyContext {
  response: ResponseInfo;
  timeout: number;
  controller: AbortController;
  signal: AbortSignal | undefined;
  done: () => void;
}

/**
 * The body from its first chunk on, read only when the stream's reader asks (Readable.from pulls), so a slow
 * reader slows the service rather than filling memory. Each wait for data the reader asked for is bounded
 * by `timeout`: a connection that goes silent ends as a `TimeoutError`, while a reader that pauses for
 * longer than that is not timed at all.
 */
async function* rest(
  first: Uint8Array | undefined,
  chunks: StreamedAnswer['chunks'],
  context: BodyContext,
): AsyncGenerator<Uint8Array, void, undefined> {
  const { response, timeout, controller, signal } = context;
  let received = first?.byteLength ?? 0;
  let silent = false;
  try {
    if (first === undefined) return;
    yield first;
    for (;;) {
      const wait = setTimeout(() => {
        silent = true;
        controller.abort(new Error(`No data for ${timeout} ms.`));
      }, timeout);
      let next: IteratorResult<Uint8Array, undefined>;
      try {
        next = await chunks.next();
      } finally {
        clearTimeout(wait);
      }
      if (next.done) return;
      received += next.value.byteLength;
      yield next.value;
    }
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    throw interrupted(cause, received, response, timeout, silent);
  } finally {
    context.done();
    await chunks.return?.().catch(() => undefined);
  }
}

/** The error of a body that stopped after `received` bytes, before its end. */
function interrupted(
  cause: unknown,
  received: number,
  response: ResponseInfo,
  timeout: number,
  silent: boolean,
): ServicePayError {
  const init = {
    statusCode: response.statusCode,
    headers: response.headers,
    requestId: response.requestId,
    cause,
  };
  if (silent) {
    return new TimeoutError({
      ...init,
      code: 'timeout',
      message: `The download stopped: no data for ${timeout} ms after ${received} bytes. What came is incomplete; download it again.`,
    });
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ConnectionError({
    ...init,
    code: 'stream_interrupted',
    message: `The download was cut off after ${received} bytes, before its end (${reason}). What came is incomplete; download it again.`,
  });
}
