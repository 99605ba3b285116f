import type { APIPromise } from '../api-promise.ts';
import type { RequestOptions } from '../client.ts';
import { segment } from '../internal/query.ts';
import type { ListParams, PagePromise } from '../pagination.ts';
import type { ListBalanceTransactionsParams as ListBalanceTransactionsQuery } from '../protocol/index.ts';
import { type BalanceTransaction, Envelopes } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * Filters and page of {@link BalanceTransactions.list}: `type`, `sessionId`, `createdFrom` (inclusive) and
 * `createdTo` (exclusive) as ISO 8601 strings or `Date`s, `environment`, `limit` (1–100, default 20),
 * `startingAfter` (a `nextCursor`).
 *
 * @example
 * import type { ListBalanceTransactionsParams } from '@servicepay/node';
 * const today: ListBalanceTransactionsParams = { createdFrom: new Date('2026-12-05T00:00:00Z'), limit: 100 };
 */
export type ListBalanceTransactionsParams = Omit<
  ListParams<ListBalanceTransactionsQuery>,
  'createdFrom' | 'createdTo'
> & { createdFrom?: string | Date; createdTo?: string | Date };

const iso = (time: string | Date | undefined) => (time instanceof Date ? time.toISOString() : time);

/**
 * The ledger: every movement of a business's money, once, newest first (`txn_…`): payments in, refunds out,
 * credits no session took and their returns, with the bank's transfer id and the payer's masked account.
 * Reached as `servicepay.balanceTransactions`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * for await (const entry of servicepay.balanceTransactions.list({ type: 'payment' })) {
 *   console.log(entry.transferId, entry.amount, entry.payerAccount);
 * }
 */
export class BalanceTransactions extends APIResource {
  /**
   * Retrieves one entry by id; another business's answers 403.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { amount, transferId } = await servicepay.balanceTransactions.retrieve('txn_123');
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<BalanceTransaction> {
    return this.call({
      method: 'GET',
      path: `/api/balance-transactions/${segment(id)}`,
      schema: Envelopes.balanceTransaction,
      options,
    });
  }

  /**
   * Lists the ledger of the key's environment, newest first. Await it for one page, or `for await` it to walk
   * every entry of every page.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const page = await servicepay.balanceTransactions.list({ sessionId: 'ses_123' });
   * console.log(page.data.map((entry) => `${entry.type} ${entry.amount}`));
   */
  list(
    params: ListBalanceTransactionsParams = {},
    options?: RequestOptions,
  ): PagePromise<BalanceTransaction> {
    const { createdFrom, createdTo, ...rest } = params;
    return this.paginate(
      '/api/balance-transactions',
      { ...rest, createdFrom: iso(createdFrom), createdTo: iso(createdTo) },
      Envelopes.balanceTransactionList,
      options,
    );
  }
}
