import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../db/sessions.ts';
import type { VirtualAccountRecord } from '../db/virtual-accounts.ts';
import { decideNotification } from './notification-decision.ts';

const T0 = 1_780_000_000_000;
const account: VirtualAccountRecord = {
  accountNumber: '9900000001',
  sessionId: 'ses_1',
  bankName: 'Simulated Bank',
  accountName: 'Bola Books / ServicePay',
  createdAt: T0,
  expiresAt: T0 + 1_800_000,
  closedAt: null,
};
const session: SessionRecord = {
  seq: 1,
  id: 'ses_1',
  businessId: 'biz_1',
  environment: 'test',
  reference: 'order-1',
  status: 'awaiting_payment',
  amount: 500_000,
  currency: 'NGN',
  payerName: 'Ada Lovelace',
  payerEmail: 'ada@example.com',
  payerPhone: null,
  metadata: {},
  clientSecretHash: Buffer.alloc(40),
  clientSecretUsedAt: T0,
  accountNumber: '9900000001',
  mismatchReceived: null,
  createdAt: T0,
  updatedAt: T0,
  expiresAt: T0 + 1_800_000,
  paidAt: null,
  amountRefunded: 0,
  paymentLinkId: null,
  successUrl: null,
  cancelUrl: null,
};
const credit = { outcome: 'credited', amount: 500_000, currency: 'NGN', returnReason: null } as const;
const returned = { ...credit, outcome: 'returned', returnReason: 'amount_mismatch' } as const;

describe('decideNotification: what a transfer not settled before does, before anything is written', () => {
  it('the exact amount in the currency on the open account pays the session, nothing unapplied', () => {
    expect(decideNotification(credit, account, session)).toEqual({
      result: 'credited',
      transition: { to: 'successful' },
    });
  });

  it('another amount shows the session as mismatch with the amount received; a credit of it is refunded', () => {
    expect(decideNotification({ ...credit, amount: 499_999 }, account, session)).toEqual({
      result: 'mismatch',
      unapplied: 'amount_mismatch',
      transition: { to: 'mismatch', options: { mismatchReceived: 499_999 } },
    });
    // The bank returned it itself: the payer sees the mismatch, nothing is left to refund.
    expect(decideNotification({ ...returned, amount: 499_999 }, account, session)).toEqual({
      result: 'mismatch',
      transition: { to: 'mismatch', options: { mismatchReceived: 499_999 } },
    });
  });

  it('money the session cannot take is recorded unapplied (refunded), the session untouched', () => {
    expect(decideNotification({ ...credit, currency: 'USD' }, account, session)).toEqual({
      result: 'unapplied',
      unapplied: 'currency_mismatch',
    });
    expect(decideNotification(credit, account, { ...session, status: 'successful' })).toEqual({
      result: 'unapplied',
      unapplied: 'session_ended',
    });
    expect(decideNotification(credit, { ...account, closedAt: T0 + 1 }, session)).toEqual({
      result: 'unapplied',
      unapplied: 'account_closed',
    });
    // An account the session offered before and no longer offers.
    expect(decideNotification(credit, account, { ...session, accountNumber: '9900000002' })).toEqual({
      result: 'unapplied',
      unapplied: 'account_closed',
    });
    expect(decideNotification(credit, undefined, undefined)).toEqual({
      result: 'unknown_account',
      unapplied: 'unknown_account',
    });
  });

  it('a transfer the bank did not credit changes nothing where the session would not have taken it', () => {
    expect(decideNotification({ ...returned, currency: 'USD' }, account, session)).toEqual({
      result: 'not_credited',
    });
    expect(decideNotification({ ...returned, returnReason: 'account_closed' }, account, session)).toEqual({
      result: 'not_credited',
    });
    expect(decideNotification(returned, account, { ...session, status: 'expired' })).toEqual({
      result: 'not_credited',
    });
    expect(decideNotification(returned, undefined, undefined)).toEqual({ result: 'unknown_account' });
  });
});
