import type {
  PublicSession,
  Session,
  StatusMessage,
  StatusReason,
  VirtualAccount,
} from '@servicepay/node/protocol';
import type { SessionRecord } from '../db/sessions.ts';
import type { VirtualAccountRecord } from '../db/virtual-accounts.ts';
import { toIso, toIsoOrNull } from '../internal/clock.ts';

/** The bank account as the payer and the merchant see it. */
export function toVirtualAccountView(account: VirtualAccountRecord): VirtualAccount {
  return {
    bankName: account.bankName,
    accountNumber: account.accountNumber,
    accountName: account.accountName,
    expiresAt: toIso(account.expiresAt),
  };
}

/** The session as the merchant's backend sees it (secret key, webhooks). */
export function toSessionView(
  session: Omit<SessionRecord, 'seq'>,
  account: VirtualAccountRecord | undefined,
): Session {
  return {
    id: session.id,
    reference: session.reference,
    status: session.status,
    environment: session.environment,
    amount: session.amount,
    currency: session.currency,
    payer: {
      name: session.payerName,
      email: session.payerEmail,
      ...(session.payerPhone === null ? {} : { phone: session.payerPhone }),
    },
    metadata: session.metadata,
    virtualAccount: account ? toVirtualAccountView(account) : null,
    lastMismatch:
      session.mismatchReceived === null
        ? null
        : { expectedAmount: session.amount, receivedAmount: session.mismatchReceived },
    createdAt: toIso(session.createdAt),
    updatedAt: toIso(session.updatedAt),
    expiresAt: toIso(session.expiresAt),
    paidAt: toIsoOrNull(session.paidAt),
    amountRefunded: session.amountRefunded,
    paymentLink: session.paymentLinkId,
    successUrl: session.successUrl,
    cancelUrl: session.cancelUrl,
  };
}

/** What the payer's browser may see of a session: no payer details, no metadata. */
export function toPublicSession(view: Session, merchantName: string): PublicSession {
  return {
    id: view.id,
    reference: view.reference,
    status: view.status,
    environment: view.environment,
    amount: view.amount,
    currency: view.currency,
    merchantName,
    expiresAt: view.expiresAt,
  };
}

/**
 * The push message for a session as the merchant view shows it: the live transition's view, the view stored
 * with a past event (replay), or the current one. The account is offered only while the session takes money.
 */
export function toStatusMessage(
  view: Session,
  merchantName: string,
  reason: StatusReason | null,
): StatusMessage {
  const takesMoney = view.status === 'awaiting_payment' || view.status === 'mismatch';
  return {
    status: view.status,
    reason,
    session: toPublicSession(view, merchantName),
    virtualAccount: takesMoney ? view.virtualAccount : null,
    mismatch: view.status === 'mismatch' ? view.lastMismatch : null,
  };
}
