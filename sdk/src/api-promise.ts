/**
 * The HTTP side of a successful answer: its status, its headers (lower-cased) and the service's request id,
 * to log or quote to support as you would an error's.
 *
 * @example
 * import type { ResponseInfo } from '@servicepay/node';
 * const logLine = (response: ResponseInfo) => `${response.statusCode} ${response.requestId}`;
 */
export interface ResponseInfo {
  statusCode: number;
  /** Every response header, names lower-cased (`request-id`, `ratelimit-remaining`, …). */
  headers: Readonly<Record<string, string>>;
  /** The `Request-Id` header (`req_…`); `null` if a proxy dropped it. */
  requestId: string | null;
}

/**
 * What a resource method returns: await it for the data, as a Promise; call `withResponse()` for the data
 * and the {@link ResponseInfo} of the answer together (the request id of a success, the rate-limit headers).
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const { data: session, response } = await servicepay.sessions.retrieve('ses_123').withResponse();
 * console.log(session.status, response.requestId, response.headers['ratelimit-remaining']);
 */
export class APIPromise<T> extends Promise<T> {
  readonly #result: Promise<{ data: T; response: ResponseInfo }>;

  constructor(result: Promise<{ data: T; response: ResponseInfo }>) {
    // The base promise is a placeholder: `then` reads the real result, so this class needs no executor.
    super((resolve) => {
      resolve(undefined as T);
    });
    this.#result = result;
  }

  // Promise methods (`then` of a derived promise, `Promise.all`) build plain Promises, not APIPromises.
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The data and the HTTP answer it came in. */
  withResponse(): Promise<{ data: T; response: ResponseInfo }> {
    return this.#result;
  }

  // biome-ignore lint/suspicious/noThenProperty: an APIPromise is awaited like the Promise it extends.
  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#result.then(({ data }) => data).then(onfulfilled, onrejected);
  }
}
