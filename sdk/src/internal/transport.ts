import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { ResponseInfo } from '../api-promise.ts';
import type { RequestOptions } from '../options.ts';
import type { Environment } from '../protocol/index.ts';

// What the resources send through, typed apart from the HTTP transport that implements it: the resources
// depend on this contract only, and the client wires the two together.

/** The HTTP methods the API uses. @internal */
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One call as the resources describe it to the transport. @internal */
export interface APIRequest<S extends z.ZodType> {
  method: Method;
  path: string;
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  body?: unknown;
  /** Schema of the whole response envelope. */
  schema: S;
  options?: RequestOptions | undefined;
}

/** A GET whose answer is a download (a CSV export), read as a stream rather than parsed. @internal */
export interface StreamRequest {
  path: string;
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** The `Accept` header: what the download is (`text/csv`); an error still comes as the JSON envelope. */
  accept: string;
  options?: RequestOptions | undefined;
}

/** What the resources send through. Not part of the public API. @internal */
export interface Transport {
  readonly environment: Environment;
  send<S extends z.ZodType>(call: APIRequest<S>): Promise<{ body: z.output<S>; response: ResponseInfo }>;
  /**
   * Opens a download: resolves once its first bytes arrived, with the body as a Node `Readable` that starts
   * with them; rejects with the SDK's error for an error status, or when no first byte came (retried as
   * `send` retries). A failure after that is the stream's `error` event, never retried.
   */
  stream(call: StreamRequest): Promise<{ body: Readable; response: ResponseInfo }>;
}
