import type { Readable } from 'node:stream';
import { APIPromise } from './api-promise.ts';
import { nodeBuiltin } from './internal/node-builtin.ts';

/**
 * A CSV export as it arrives: a Node `Readable` of the file's bytes, exactly as the service sent them (UTF-8
 * with a byte-order mark, CRLF rows, docs/protocol.md "Exports"), read at the pace you read it. It emits
 * `error` (a `ConnectionError` with `code: 'stream_interrupted'`, or a `TimeoutError`) if the download stops
 * before its end, so use `pipeline` (which rejects then), not `.pipe` (which does not).
 *
 * @example
 * import { createWriteStream } from 'node:fs';
 * import { pipeline } from 'node:stream/promises';
 * import { ServicePay, type ExportStream } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const csv: ExportStream = await servicepay.exports.sessions({ createdFrom: '2026-12-01' });
 * await pipeline(csv, createWriteStream(csv.filename ?? 'sessions.csv'));
 */
export interface ExportStream extends Readable {
  /**
   * The file name the service gives the export (`Content-Disposition`), e.g.
   * `servicepay-sessions-test-2026-12-01-to-2026-12-02.csv`; `null` when it named none, or a name that is not
   * a plain file name (letters, digits, `.`, `-`, `_`), so it is safe as a path's last part.
   */
  readonly filename: string | null;
}

/**
 * What {@link ExportPromise.toFile} wrote.
 *
 * @example
 * import type { ExportFile } from '@servicepay/node';
 * const describe = (file: ExportFile) => `${file.path}: ${file.bytes} bytes (${file.filename}, ${file.requestId})`;
 */
export interface ExportFile {
  /** The path written, as given. */
  path: string;
  /** Its size: every byte of the export. */
  bytes: number;
  /** The service's name for the file (see {@link ExportStream.filename}). */
  filename: string | null;
  /** The request id of the download, to quote to support. */
  requestId: string | null;
}

/**
 * What an export method returns: await it for the {@link ExportStream} (once the first bytes came; an error
 * before them, 400, 401, 403, 429…, rejects it as every call does), call `withResponse()` for the stream and
 * its HTTP answer, or `toFile(path)` to write it to a file that only appears once it is complete.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const file = await servicepay.exports.balanceTransactions({ createdFrom: '2026-12-01', createdTo: '2026-12-02' }).toFile('books.csv');
 */
export class ExportPromise extends APIPromise<ExportStream> {
  /**
   * Writes the export to `path`: to `<path>.partial` first, renamed to `path` once every byte arrived (so a
   * file at `path` is always whole, and an existing one is replaced only by a whole one); on any failure the
   * partial file is removed and the error thrown. Resolves with the size and the service's name for it.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { bytes } = await servicepay.exports.sessions({ createdFrom: '2026-12-01' }).toFile('sessions.csv');
   */
  async toFile(path: string): Promise<ExportFile> {
    const { data: csv, response } = await this.withResponse();
    const fs = nodeBuiltin('node:fs');
    const { pipeline } = nodeBuiltin('node:stream/promises');
    const partial = `${path}.partial`;
    try {
      await pipeline(csv, fs.createWriteStream(partial));
      await fs.promises.rename(partial, path);
    } catch (error) {
      await fs.promises.rm(partial, { force: true });
      throw error;
    }
    const { size } = await fs.promises.stat(path);
    return { path, bytes: size, filename: csv.filename, requestId: response.requestId };
  }
}
