import { Transform } from 'node:stream';
import { type Options, stringify } from 'csv-stringify/sync';

/**
 * What a cell may hold. A `number` is a value the service computed itself (an amount in minor units, a count):
 * written as it is, so a spreadsheet sums it. A `string` is text, from whoever wrote it (a payer's name, a
 * merchant's reference): neutralised when a spreadsheet would run it as a formula. `null` is an empty cell.
 */
export type CsvCell = string | number | null;

/** The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * The text as a spreadsheet should show it: a cell that would start a formula (`=`, `+`, `-`, `@`, tab, carriage
 * return) gets a leading `'`, which Excel, LibreOffice and Google Sheets read as "this is text" (OWASP's
 * advice); every other text is unchanged.
 *
 * @example
 * neutraliseFormula('=HYPERLINK("http://evil")'); // '\'=HYPERLINK("http://evil")'
 * neutraliseFormula('Ada Obi'); // 'Ada Obi'
 */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * Options of the CSV: RFC 4180 (CRLF after every record, `"` doubled inside quotes), UTF-8 with a byte-order
 * mark so that Excel reads it as UTF-8 (docs/decisions/ledger-and-exports.md, "A BOM at the start").
 */
const OPTIONS: Options = {
  record_delimiter: 'windows',
  // csv-stringify quotes a cell holding the record delimiter (CRLF) by itself, but not a lone LF or CR once the
  // delimiter is CRLF: a payer's name with "\n" would break the row in a spreadsheet. Quote those too.
  quoted_match: /[\r\n]/,
  cast: {
    // A neutralised cell is also quoted, as OWASP asks: the quote keeps a `,` or `;` inside it from starting a
    // new cell in a reader whose separator is not the comma.
    string: (value: string) => (FORMULA_START.test(value) ? { value: `'${value}`, quoted: true } : value),
    number: (value: number) => {
      // Only integers the service computed reach a number cell; anything else is a fault of the caller.
      if (!Number.isSafeInteger(value)) throw new Error(`a CSV number cell must be a safe integer: ${value}`);
      return String(value);
    },
  },
};

/** UTF-8's byte-order mark, written once at the start of the file. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * A stream that takes pages of rows (arrays of rows of `CsvCell`; the header is the first row of the first
 * page) and gives out the CSV's bytes, one chunk per page, each encoded by csv-stringify. A page at a time, not
 * a row: csv-stringify's own stream costs about 16 µs a row and writes each row as a chunk of its own, where
 * a page of 1,000 encodes at about 2 µs a row and leaves the socket in one write. The stream keeps to its
 * reader's backpressure, so the next page is read from the database only when the client has taken this one.
 *
 * @example
 * await pipeline(Readable.from([[['id', 'amount'], ['txn_1', -500]]]), csvWriter(), res);
 */
export function csvWriter(): Transform {
  let first = true;
  return new Transform({
    writableObjectMode: true,
    // A page waiting to be encoded, not 16 (the object-mode default).
    writableHighWaterMark: 1,
    transform(page: CsvCell[][], _encoding, done) {
      try {
        const text = Buffer.from(stringify(page, OPTIONS), 'utf8');
        done(null, first ? Buffer.concat([BOM, text]) : text);
        first = false;
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done) {
      // An export with no page at all is still a file: its BOM.
      done(null, first ? BOM : undefined);
    },
  });
}
