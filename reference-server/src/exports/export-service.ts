import { type Environment, exportBoundMs } from '@servicepay/node/protocol';
import type { ExportPageQuery } from '../db/export-pages.ts';
import type { Store } from '../db/store.ts';
import type { CsvCell } from './csv-writer.ts';
import { BALANCE_TRANSACTION_COLUMNS, type ExportColumn, SESSION_COLUMNS } from './export-columns.ts';

/** What can be exported. */
export type ExportKind = 'balance-transactions' | 'sessions';

/** Whose rows, and which: the owner, and the range as the query gave it (`YYYY-MM-DD` or ISO 8601 instants). */
export interface ExportRequest {
  businessId: string;
  environment: Environment;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
}

/** The owner and range of an export (epoch ms; `createdFrom` included, `createdTo` excluded), and its page size. */
type ExportRange = Omit<ExportPageQuery, 'afterSeq'>;

/** What an export reads: the ledger's and the sessions' pages. */
export type ExportStore = Pick<Store, 'balanceTransactions' | 'exportPages'>;

/** How one kind is read: the page after a row (none: the first), and its columns. */
interface ExportSource<R extends { seq: number; createdAt: number }> {
  page(store: ExportStore, range: ExportRange, after: R | undefined): Promise<R[]>;
  columns: readonly ExportColumn<R>[];
}

// biome-ignore lint/suspicious/noExplicitAny: each source is typed where it is declared; the map holds them all.
const SOURCES: Record<ExportKind, ExportSource<any>> = {
  // The ledger's own keyset pages, the very statement of the API's list, oldest first (db/balance-transactions.ts).
  'balance-transactions': {
    page: (store, range, after) =>
      store.balanceTransactions.listBalanceTransactions({ ...range, order: 'oldest_first', after }),
    columns: BALANCE_TRANSACTION_COLUMNS,
  },
  sessions: {
    page: (store, range, after) => store.exportPages.sessions({ ...range, afterSeq: after?.seq ?? 0 }),
    columns: SESSION_COLUMNS,
  },
};

/** A bound of the file name: the day when it is a midnight UTC, else the instant without `:` (file systems). */
const nameOf = (ms: number): string => {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace(/[:.]/g, '').replace(/000Z$/, 'Z');
};

/**
 * The CSV exports, without HTTP: the rows of a kind for an owner and a range, read page by page (a page is
 * read when the one before it has been taken), and the export's file name. The API, the portal and the CLI
 * all stream these rows through `csvWriter`.
 *
 * @example
 * const pages = new ExportService(store).pages('sessions', { businessId, environment: 'test', createdFrom: '2026-12-01' });
 * await pipeline(Readable.from(pages), csvWriter(), createWriteStream('sessions.csv'));
 */
export class ExportService {
  constructor(
    private readonly store: ExportStore,
    /** Rows per page: enough to make a page's statement cheap per row, few enough to hold in memory. */
    private readonly pageSize = 1000,
  ) {}

  /**
   * The export's pages of cells, oldest row first: the header and the first page's rows, then a page at a
   * time. The first page is read before anything is given out, so a caller that takes the first item before
   * it answers (`sendCsv`) reports a database that does not answer as an error, not as a file that stops
   * after its header.
   */
  async *pages(kind: ExportKind, request: ExportRequest): AsyncGenerator<CsvCell[][]> {
    const source = SOURCES[kind];
    const range: ExportRange = {
      businessId: request.businessId,
      environment: request.environment,
      createdFrom: request.createdFrom === undefined ? 0 : exportBoundMs(request.createdFrom),
      createdTo: request.createdTo === undefined ? Number.MAX_SAFE_INTEGER : exportBoundMs(request.createdTo),
      limit: this.pageSize,
    };
    const cellsOf = (row: unknown) => source.columns.map((column) => column.cell(row));
    let page = await source.page(this.store, range, undefined);
    yield [source.columns.map((column) => column.header), ...page.map(cellsOf)];
    for (;;) {
      const last = page.at(-1);
      if (page.length < this.pageSize || last === undefined) return;
      page = await source.page(this.store, range, last);
      if (page.length > 0) yield page.map(cellsOf);
    }
  }

  /**
   * The export's file name: `servicepay-<kind>-<environment>-<from>-to-<to>.csv` (`start`/`now` for an open end).
   *
   * @example
   * exports.filename('sessions', { businessId, environment: 'test', createdFrom: '2026-12-01', createdTo: '2026-12-02' });
   * // 'servicepay-sessions-test-2026-12-01-to-2026-12-02.csv'
   */
  filename(kind: ExportKind, request: ExportRequest): string {
    const from = request.createdFrom === undefined ? 'start' : nameOf(exportBoundMs(request.createdFrom));
    const to = request.createdTo === undefined ? 'now' : nameOf(exportBoundMs(request.createdTo));
    return `servicepay-${kind}-${request.environment}-${from}-to-${to}.csv`;
  }
}
