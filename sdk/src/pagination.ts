import type { ResponseInfo } from './api-promise.ts';
import type { Pagination } from './protocol/index.ts';

/**
 * A list's query as the SDK takes it: the protocol's, with `limit` typed as the number it is (the protocol's
 * input type leaves it `unknown` because the server coerces it from the query string).
 */
export type ListParams<P> = Omit<P, 'limit'> & { limit?: number };

/** Fetches the page after `cursor`; the resources build it from the list call's own parameters. */
export type PageFetcher<T> = (cursor: string) => Promise<Page<T>>;

/**
 * One page of a list, newest first. `data` holds this page; `for await` walks every item of every page,
 * fetching the next page (`startingAfter` = `nextCursor`) only when the loop gets there.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const page = await servicepay.sessions.list({ limit: 10 });
 * console.log(page.data.length, page.hasMore);
 * for await (const session of page) console.log(session.id); // this page, then the next ones
 */
export class Page<T> implements AsyncIterable<T> {
  /** The items of this page. */
  readonly data: readonly T[];
  /** Whether another page follows. */
  readonly hasMore: boolean;
  /** Pass as `startingAfter` to get the next page; `null` on the last page. */
  readonly nextCursor: string | null;
  /** The HTTP answer this page came in: status, headers, request id. */
  readonly response: ResponseInfo;
  readonly #fetchNext: PageFetcher<T>;

  constructor(data: readonly T[], pagination: Pagination, response: ResponseInfo, fetchNext: PageFetcher<T>) {
    this.data = data;
    this.hasMore = pagination.hasMore;
    this.nextCursor = pagination.nextCursor;
    this.response = response;
    this.#fetchNext = fetchNext;
  }

  /** Whether {@link Page.nextPage} would return a page. */
  hasNextPage(): boolean {
    return this.hasMore && this.nextCursor !== null;
  }

  /** The next page, or `null` after the last one. */
  async nextPage(): Promise<Page<T> | null> {
    if (!this.hasNextPage() || this.nextCursor === null) return null;
    return this.#fetchNext(this.nextCursor);
  }

  /** Every item from this page on, across pages. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page: Page<T> | null = this;
    while (page !== null) {
      yield* page.data;
      page = await page.nextPage();
    }
  }
}

/**
 * What a list method returns: await it for the first {@link Page}, or `for await` it directly to walk every
 * item of every page.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * for await (const session of servicepay.sessions.list({ status: 'successful' })) console.log(session.reference);
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  readonly #page: Promise<Page<T>>;

  constructor(page: Promise<Page<T>>) {
    this.#page = page;
  }

  // biome-ignore lint/suspicious/noThenProperty: a PagePromise is awaited like the Promise it wraps.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((value: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#page.then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#page.catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#page.finally(onfinally);
  }

  /** The first page and the HTTP answer it came in (also `page.response`). */
  withResponse(): Promise<{ data: Page<T>; response: ResponseInfo }> {
    return this.#page.then((page) => ({ data: page, response: page.response }));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* await this.#page;
  }
}
