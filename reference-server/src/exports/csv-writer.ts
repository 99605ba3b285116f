import type { Transform } from 'node:stream';
import { stringify } from 'csv-stringify';

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
const OPTIONS = {
  bom: true,
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
} as const;

/**
 * A stream that takes rows (arrays of `CsvCell`, the first one the header) and gives out the CSV's bytes:
 * csv-stringify's, which keeps to the stream's backpressure, so a row is read from the database only when the
 * client has taken the bytes before it.
 *
 * @example
 * await pipeline(Readable.from([['id', 'amount'], ['txn_1', -500]]), csvWriter(), res);
 */
export function csvWriter(): Transform {
  return stringify(OPTIONS);
}
