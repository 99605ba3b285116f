import { parse } from 'csv-parse/sync';

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
