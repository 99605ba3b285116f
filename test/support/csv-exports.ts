import { parse } from 'csv-parse/sync';
import type { ExportPageRepository } from '../../reference-server/src/db/export-pages.ts';

/** A CSV export's records, the header first, read as a spreadsheet reads RFC 4180 (the BOM skipped). */
export const csvRecords = (text: string | Buffer): string[][] =>
  parse(text, { bom: true, relaxColumnCount: false }) as string[][];

/** The header of `GET /api/exports/balance-transactions` (docs/protocol.md, "Exports"). */
export const LEDGER_CSV_HEADER = [
  'id',
  'createdAt',
  'type',
  'amount',
  'currency',
  'sessionId',
  'refundId',
  'transferId',
  'payerAccount',
];

/** A ledger entry as the API answers it (`createdAt` in ISO 8601). */
interface LedgerEntryFields {
  id: string;
  createdAt: string;
  type: string;
  amount: number;
  currency: string;
  sessionId?: string | null;
  refundId?: string | null;
  transferId: string;
  payerAccount?: string | null;
}

/** The export's row of a ledger entry: every field in the header's order, an absent one empty. */
export const ledgerCsvRow = (entry: LedgerEntryFields): string[] => [
  entry.id,
  entry.createdAt,
  entry.type,
  String(entry.amount),
  entry.currency,
  entry.sessionId ?? '',
  entry.refundId ?? '',
  entry.transferId,
  entry.payerAccount ?? '',
];

/**
 * Makes the sessions export's page reader fail on its second page (injected: "the database went away"), so the
 * download fails after its first byte. `calls()` is how many pages were asked for; `restore()` puts the real
 * reader back (in a `finally`).
 *
 * @example
 * const fault = failSecondSessionsPage(server.service.deps.store.exportPages);
 * try { ... expect(fault.calls()).toBe(2); } finally { fault.restore(); }
 */
export function failSecondSessionsPage(pages: ExportPageRepository): {
  calls: () => number;
  restore: () => void;
} {
  const real = pages.sessions.bind(pages);
  let calls = 0;
  pages.sessions = async (query) => {
    calls += 1;
    if (calls === 2) throw new Error('injected: the database went away mid-export');
    return real(query);
  };
  return {
    calls: () => calls,
    restore: () => {
      pages.sessions = real;
    },
  };
}
