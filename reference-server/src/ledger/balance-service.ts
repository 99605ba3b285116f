import type {
  Balance,
  BalanceTransaction,
  BalanceTransactionType,
  Pagination,
} from '@servicepay/node/protocol';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { LedgerCursor } from '../db/balance-transactions.ts';
import type { Store } from '../db/store.ts';
import { DomainError, notFound } from '../domain-errors.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { toBalanceTransactionView, toBalanceView } from './balance-views.ts';

/** `GET /api/balance-transactions`'s query once parsed (ISO times as given). */
export interface BalanceTransactionListQuery {
  limit: number;
  startingAfter?: string | undefined;
  type?: BalanceTransactionType | undefined;
  sessionId?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
}

/**
 * What a merchant reads of its ledger with a secret key: one entry, a page of entries, the balance. Only reads:
 * the ledger is written by the jobs that move the money (`LedgerEntries`). Every read is scoped to the
 * caller's business and environment; another business's entry answers 403 (`assertOwnedBy`).
 *
 * @example
 * const page = await new BalanceService(store).list(caller, { limit: 20, type: 'refund' });
 */
export class BalanceService {
  constructor(private readonly store: Store) {}

  async retrieve(caller: ApiCaller, id: string): Promise<BalanceTransaction> {
    const entry = await this.store.balanceTransactions.find(id);
    if (!entry) throw notFound('balance transaction');
    assertOwnedBy(caller, entry, 'balance transaction');
    return toBalanceTransactionView(entry);
  }

  /** One page, newest first; `startingAfter` is the last entry of the previous page. */
  async list(
    caller: ApiCaller,
    query: BalanceTransactionListQuery,
  ): Promise<{ data: BalanceTransaction[]; pagination: Pagination }> {
    const createdFrom = query.createdFrom === undefined ? undefined : Date.parse(query.createdFrom);
    const createdTo = query.createdTo === undefined ? undefined : Date.parse(query.createdTo);
    if (createdFrom !== undefined && createdTo !== undefined && createdTo <= createdFrom) {
      throw new DomainError('validation_failed', 'createdTo must be later than createdFrom.', [
        { path: 'createdTo', message: 'must be later than createdFrom' },
      ]);
    }
    let after: LedgerCursor | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await this.store.balanceTransactions.find(query.startingAfter);
      if (!cursor || cursor.businessId !== caller.business.id || cursor.environment !== caller.environment) {
        throw unknownCursor('a balance transaction of this list');
      }
      // The one read of the cursor's row: its place in the order goes to the page's statement as it is.
      after = { createdAt: cursor.createdAt, seq: cursor.seq };
    }
    const rows = await this.store.balanceTransactions.listBalanceTransactions({
      businessId: caller.business.id,
      environment: caller.environment,
      type: query.type,
      sessionId: query.sessionId,
      createdFrom,
      createdTo,
      after,
      order: 'newest_first',
      limit: query.limit + 1,
    });
    return toPage(rows, query.limit, toBalanceTransactionView);
  }

  /** The caller's environment's balance per currency, over every entry ever written. */
  async balance(caller: ApiCaller): Promise<Balance> {
    const totals = await this.store.balanceTransactions.totals({
      businessId: caller.business.id,
      environment: caller.environment,
    });
    return toBalanceView(caller.environment, totals);
  }
}
