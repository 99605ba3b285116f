import { ExportParamsSchema } from '@servicepay/node/protocol';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { ExportKind, ExportRequest } from '../exports/export-service.ts';
import { sendCsv } from './csv-response.ts';
import { defineOperation } from './operation.ts';

/** The export's owner and range, from the caller (its business and environment) and the checked query. */
const requestOf = (
  caller: ApiCaller,
  query: { createdFrom?: string | undefined; createdTo?: string | undefined },
): ExportRequest => ({
  businessId: caller.business.id,
  environment: caller.environment,
  createdFrom: query.createdFrom,
  createdTo: query.createdTo,
});

const RANGE =
  "Rows created in `[createdFrom, createdTo)` (a `YYYY-MM-DD` is that day's midnight UTC; either end may be left open), oldest first, in the key's environment. RFC 4180 CSV in UTF-8 with a byte-order mark; a text cell that a spreadsheet would run as a formula starts with `'`; amounts are integers in minor units. Streamed: an error before the first byte is the JSON envelope, an error after it closes the connection before the end (a truncated download, never a short file).";

/** One export operation: `GET /api/exports/<kind>`, streamed as CSV. */
const exportOperation = <const K extends ExportKind, const Id extends string>(
  kind: K,
  operationId: Id,
  summary: string,
) =>
  defineOperation({
    method: 'get',
    path: `/api/exports/${kind}`,
    operationId,
    tag: 'Exports',
    summary,
    description: RANGE,
    auth: 'secretKey',
    query: ExportParamsSchema,
    success: { 200: { kind: 'csv', description: `The ${kind.replace('-', ' ')} as a CSV download.` } },
    // A bad range is the query's validation (400), declared with it; the key's refusals with its auth.
    errors: [],
    handler: async ({ caller, query, res }, { exports }) => {
      const request = requestOf(caller, query);
      await sendCsv(res, exports.filename(kind, request), exports.pages(kind, request));
      return undefined;
    },
  });

/**
 * The merchant's CSV exports (issue 37): each streamed from the database page by page in constant memory.
 *
 * @example
 * mountOperations(app, EXPORT_OPERATIONS, deps); // as createApp mounts every table
 */
export const EXPORT_OPERATIONS = [
  exportOperation('balance-transactions', 'exportBalanceTransactions', 'Export balance transactions as CSV'),
  exportOperation('sessions', 'exportSessions', 'Export sessions as CSV'),
];
