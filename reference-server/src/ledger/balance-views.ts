import type { Balance, BalanceTransaction, CurrencyBalance, Environment } from '@servicepay/node/protocol';
import type { BalanceTransactionRecord, CurrencyTotals } from '../db/balance-transactions.ts';
import { toIso } from '../internal/clock.ts';

/**
 * A ledger row as the API shows it.
 *
 * @example
 * res.json({ data: toBalanceTransactionView(await store.balanceTransactions.find('txn_…')) });
 */
export function toBalanceTransactionView(entry: BalanceTransactionRecord): BalanceTransaction {
  return {
    id: entry.id,
    type: entry.type,
    environment: entry.environment,
    amount: entry.amount,
    currency: entry.currency,
    sessionId: entry.sessionId,
    refundId: entry.refundId,
    transferId: entry.transferId,
    payerAccount: entry.payerAccount,
    createdAt: toIso(entry.createdAt),
  };
}

/**
 * The ledger's sums per currency as `GET /api/balance` answers them (the entry count is the repository's own).
 *
 * @example
 * toBalanceView('test', await store.balanceTransactions.totals({ businessId, environment: 'test' }));
 */
export function toBalanceView(environment: Environment, totals: readonly CurrencyTotals[]): Balance {
  return {
    environment,
    currencies: totals.map(
      ({ currency, collected, refunded, returned, net }): CurrencyBalance => ({
        currency,
        collected,
        refunded,
        returned,
        net,
      }),
    ),
  };
}
