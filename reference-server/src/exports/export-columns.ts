import type { BalanceTransactionRecord } from '../db/balance-transactions.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { CsvCell } from './csv-writer.ts';

/** One column of an export: its header and its cell for a row. */
export interface ExportColumn<R> {
  header: string;
  cell(row: R): CsvCell;
}

/** An epoch time as the CSV writes it: ISO 8601 in UTC, to the millisecond (empty when absent). */
export const isoTime = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();

/**
 * The columns of the sessions export, named as the API's `Session` fields. Amounts are numbers (minor units,
 * computed by the service); the payer's and the merchant's text is a string cell, neutralised by the writer
 * when it would start a formula.
 *
 * @example
 * SESSION_COLUMNS.map((column) => column.header); // ['id', 'createdAt', 'reference', …]
 */
export const SESSION_COLUMNS: readonly ExportColumn<SessionRecord>[] = [
  { header: 'id', cell: (session) => session.id },
  { header: 'createdAt', cell: (session) => isoTime(session.createdAt) },
  { header: 'reference', cell: (session) => session.reference },
  { header: 'status', cell: (session) => session.status },
  { header: 'amount', cell: (session) => session.amount },
  { header: 'amountRefunded', cell: (session) => session.amountRefunded },
  { header: 'currency', cell: (session) => session.currency },
  { header: 'payerName', cell: (session) => session.payerName },
  { header: 'payerEmail', cell: (session) => session.payerEmail },
  { header: 'payerPhone', cell: (session) => session.payerPhone },
  { header: 'paidAt', cell: (session) => isoTime(session.paidAt) },
];

/**
 * The columns of the balance transactions export, named as the API's `BalanceTransaction` fields: one row per
 * movement of money, the signed amount a number (in positive, out negative), the bank's transfer id and the
 * payer's masked account on every row, so each line can be matched to the bank statement.
 *
 * @example
 * BALANCE_TRANSACTION_COLUMNS.map((column) => column.header); // ['id', 'createdAt', 'type', 'amount', …]
 */
export const BALANCE_TRANSACTION_COLUMNS: readonly ExportColumn<BalanceTransactionRecord>[] = [
  { header: 'id', cell: (entry) => entry.id },
  { header: 'createdAt', cell: (entry) => isoTime(entry.createdAt) },
  { header: 'type', cell: (entry) => entry.type },
  { header: 'amount', cell: (entry) => entry.amount },
  { header: 'currency', cell: (entry) => entry.currency },
  { header: 'sessionId', cell: (entry) => entry.sessionId },
  { header: 'refundId', cell: (entry) => entry.refundId },
  { header: 'transferId', cell: (entry) => entry.transferId },
  { header: 'payerAccount', cell: (entry) => entry.payerAccount },
];
