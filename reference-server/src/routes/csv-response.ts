import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { type CsvCell, csvWriter } from '../exports/csv-writer.ts';

/**
 * Streams `pages` of rows (the header first) to `res` as a CSV download named `filename`, at the pace the client reads
 * (the pipeline's backpressure: a page is read from the database only when the bytes before it have gone).
 *
 * The first row is awaited before anything is sent, so a failure there (the database not answering) is thrown
 * to the error handler and answered in the JSON envelope. A failure after the first byte cannot change the
 * status any more: the pipeline destroys the response, so the connection closes without chunked encoding's
 * last chunk and the client sees a truncated download (an error), never a short file that looks whole; the
 * error is rethrown so the error handler logs it. A client that goes away ends the stream quietly.
 *
 * @example
 * await sendCsv(res, 'servicepay-sessions-test-start-to-now.csv', exports.pages('sessions', request));
 */
export async function sendCsv(
  res: Response,
  filename: string,
  pages: AsyncIterable<CsvCell[][]>,
): Promise<void> {
  const iterator = pages[Symbol.asyncIterator]();
  const first = await iterator.next();
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  // The name is the service's own (`ExportService.filename`: letters, digits, `-`, `.`), so it needs no escaping.
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  async function* all(): AsyncGenerator<CsvCell[][]> {
    if (first.done) return;
    yield first.value;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  try {
    // One page read ahead at most (Readable.from would read 16): what the server holds is about two pages.
    await pipeline(Readable.from(all(), { highWaterMark: 1 }), csvWriter(), res);
  } catch (error) {
    // The client closed the connection: nothing failed on this side.
    if (res.req.socket?.destroyed && (error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE')
      return;
    throw error;
  }
}
