import type { Readable } from 'node:stream';
import { ExportPromise, type ExportStream } from '../export-promise.ts';
import type { RequestOptions } from '../options.ts';
import type { ExportParams as ExportQuery } from '../protocol/index.ts';
import { APIResource } from './api-resource.ts';

/**
 * The range of an export, as {@link Exports.balanceTransactions} and {@link Exports.sessions} take it: rows
 * created in `[createdFrom, createdTo)`, each a UTC day `YYYY-MM-DD` (its midnight UTC), an ISO 8601 instant
 * with its offset, or a `Date`; either may be left out (from the first row, up to now). `environment`, as
 * every GET takes it, must be the key's. The service checks the range (a 400 `InvalidRequestError` with
 * `errors[].path` `createdFrom` or `createdTo`).
 *
 * @example
 * import type { ExportParams } from '@servicepay/node';
 * const oneDay: ExportParams = { createdFrom: '2026-12-01', createdTo: '2026-12-02' };
 */
export type ExportParams = Omit<ExportQuery, 'createdFrom' | 'createdTo'> & {
  createdFrom?: string | Date;
  createdTo?: string | Date;
};

const iso = (time: string | Date | undefined) => (time instanceof Date ? time.toISOString() : time);

/** A file name the service gave that is safe as a path's last part, else null. */
const FILE_NAME = /^attachment;\s*filename="([A-Za-z0-9_-][A-Za-z0-9._-]*)"$/;
const filenameOf = (disposition: string | undefined): string | null =>
  (disposition === undefined ? undefined : FILE_NAME.exec(disposition)?.[1]) ?? null;

/**
 * CSV exports of the books, streamed: every balance transaction or session created in a range, oldest first,
 * as the service writes them (docs/protocol.md, "Exports"). A million rows are never held in memory: the
 * service reads its database at the pace you read the stream. Reached as `servicepay.exports`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * await servicepay.exports.balanceTransactions({ createdFrom: '2026-12-01', createdTo: '2026-12-02' }).toFile('books-2026-12-01.csv');
 */
export class Exports extends APIResource {
  /**
   * Every movement of money (`id, createdAt, type, amount, currency, sessionId, refundId, transferId,
   * payerAccount`), signed amounts in minor units. Retried like any GET until its first byte, never after.
   *
   * @example
   * import { pipeline } from 'node:stream/promises';
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const csv = await servicepay.exports.balanceTransactions({ createdFrom: new Date('2026-12-01T00:00:00+01:00') });
   * await pipeline(csv, process.stdout);
   */
  balanceTransactions(params: ExportParams = {}, options?: RequestOptions): ExportPromise {
    return this.#export('/api/exports/balance-transactions', params, options);
  }

  /**
   * Every session (`id, createdAt, reference, status, amount, amountRefunded, currency, payerName, payerEmail,
   * payerPhone, paidAt`); a text cell a spreadsheet would run as a formula starts with `'`.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { bytes, filename } = await servicepay.exports.sessions({ createdFrom: '2026-12-01' }).toFile('sessions.csv');
   */
  sessions(params: ExportParams = {}, options?: RequestOptions): ExportPromise {
    return this.#export('/api/exports/sessions', params, options);
  }

  #export(path: string, params: ExportParams, options: RequestOptions | undefined): ExportPromise {
    const { createdFrom, createdTo, environment } = params;
    const opened = this.download({
      path,
      query: { environment, createdFrom: iso(createdFrom), createdTo: iso(createdTo) },
      accept: 'text/csv',
      options,
    });
    return new ExportPromise(
      opened.then(({ body, response }) => ({
        data: named(body, filenameOf(response.headers['content-disposition'])),
        response,
      })),
    );
  }
}

/** The stream, carrying the service's name for the file. */
const named = (body: Readable, filename: string | null): ExportStream =>
  Object.defineProperty(body, 'filename', { value: filename, enumerable: true }) as ExportStream;
