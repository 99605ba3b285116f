import type { SimulatedTransfer } from '@servicepay/node/protocol';
import { type SimulatedBank, UnknownAccountError } from '../bank/simulated-bank.ts';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { Store } from '../db/store.ts';
import { notFound } from '../domain-errors.ts';

/**
 * Test mode's simulated payer (`POST /api/test/transfers`, the portal's Test bank): the simulated bank pays a
 * test session's virtual account, and its notification then moves the session as a real bank's would. The
 * account must be one of the caller's sessions in the caller's environment (a test key never pays a live
 * session, nor another business's); the caller checks the key is a test key (the API answers 403
 * `test_mode_only`, the portal `environment_mismatch`).
 *
 * @example
 * const transfer = await testTransfers.pay(caller, '9900000001', 500_000); // { outcome: 'credited', … }
 */
export class TestTransfers {
  constructor(
    private readonly store: Store,
    private readonly bank: SimulatedBank,
  ) {}

  /** Pays `amount` (minor units) into the caller's session's account, from `payerAccount` if given. */
  async pay(
    caller: ApiCaller,
    accountNumber: string,
    amount: number,
    payerAccount?: string,
  ): Promise<SimulatedTransfer> {
    const account = await this.store.virtualAccounts.find(accountNumber);
    const session = account && (await this.store.sessions.find(account.sessionId));
    if (!session) throw notFound('account');
    // The environment matters as much as the business: a test key must never pay a live session.
    assertOwnedBy(caller, session, 'account');
    try {
      return await this.bank.transfer(accountNumber, amount, payerAccount);
    } catch (error) {
      if (error instanceof UnknownAccountError) throw notFound('account');
      throw error;
    }
  }
}
