import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { APIPromise, type ResponseInfo } from '../api-promise.ts';
import type { APIRequest, StreamRequest, Transport } from '../internal/transport.ts';
import type { RequestOptions } from '../options.ts';
import { Page, PagePromise } from '../pagination.ts';
import type { Environment, Pagination } from '../protocol/index.ts';

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * What every resource is built on: one transport, one way to ask for an object (`request`) and one way to walk
 * a list (`list`). Not part of the public API.
 */
export abstract class APIResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The environment of the client's key. */
  protected get environment(): Environment {
    return this.#transport.environment;
  }

  /** One call whose envelope's `data` is the answer. */
  protected call<T>(call: APIRequest<z.ZodType<{ data: T }>>): APIPromise<T> {
    return new APIPromise(
      this.#transport.send(call).then(({ body, response }) => ({ data: body.data, response })),
    );
  }

  /** A download: its body as a stream once its first bytes came (errors before them rejected, as `call`'s). */
  protected download(call: StreamRequest): Promise<{ body: Readable; response: ResponseInfo }> {
    return this.#transport.stream(call);
  }

  /** A cursor list: the first page now, the next ones with `startingAfter` = the previous `nextCursor`. */
  protected paginate<T>(
    path: string,
    params: Query & { startingAfter?: string | undefined },
    schema: z.ZodType<{ data: T[]; pagination: Pagination }>,
    options: RequestOptions | undefined,
  ): PagePromise<T> {
    const fetchPage = async (startingAfter: string | undefined): Promise<Page<T>> => {
      const { body, response } = await this.#transport.send({
        method: 'GET',
        path,
        query: { ...params, startingAfter: startingAfter ?? params.startingAfter },
        schema,
        options,
      });
      return new Page(body.data, body.pagination, response, (cursor) => fetchPage(cursor));
    };
    return new PagePromise(fetchPage(undefined));
  }
}
