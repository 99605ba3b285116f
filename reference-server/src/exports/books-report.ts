import type { Environment } from '@servicepay/node/protocol';
import type { CurrencyTotals } from '../db/balance-transactions.ts';
import type { Store } from '../db/store.ts';
import type { ReportRange } from './report-range.ts';

/** What the Reports page shows for a range: the totals per currency and each day's net per currency. */
export interface BooksReport {
  range: ReportRange;
  /** In (`collected`), out (`refunded` + `returned`) and `net` per currency over the whole range. */
  totals: CurrencyTotals[];
  /** Per currency (as in `totals`), each day's net in minor units, one per `range.days`. */
  daily: Array<{ currency: string; nets: number[] }>;
}

/**
 * Reads the ledger for a range of days: the range's sums, then each day's, through the ledger's own `totals`
 * (one grouped statement per day on the time index: at most 92, each reading only its day's rows), so the
 * days add up to the range by construction and the page needs no SQL of its own.
 *
 * @example
 * const report = await booksReport(store, { businessId, environment: 'test' }, reportRange({}, Date.now()));
 */
export async function booksReport(
  store: Store,
  owner: { businessId: string; environment: Environment },
  range: ReportRange,
): Promise<BooksReport> {
  const { bounds } = range;
  const totals = await store.balanceTransactions.totals({
    ...owner,
    createdFrom: bounds[0] ?? 0,
    createdTo: bounds.at(-1) ?? 0,
  });
  const daily = totals.map((total) => ({ currency: total.currency, nets: range.days.map(() => 0) }));
  for (let index = 0; index < range.days.length; index++) {
    const day = await store.balanceTransactions.totals({
      ...owner,
      createdFrom: bounds[index] ?? 0,
      createdTo: bounds[index + 1] ?? 0,
    });
    for (const sums of day) {
      const series = daily.find((entry) => entry.currency === sums.currency);
      if (series) series.nets[index] = sums.net;
    }
  }
  return { range, totals, daily };
}
