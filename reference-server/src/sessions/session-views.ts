import type { PublicSession, Session, StatusMessage, VirtualAccount } from '@servicepay/node/protocol';
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
export function toSessionView(session: SessionRecord, account: VirtualAccountRecord | undefined): Session {
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
  };
}

/** What the payer's browser may see: no payer details, no metadata. */
export function toPublicSession(session: SessionRecord, merchantName: string): PublicSession {
  return {
    id: session.id,
    reference: session.reference,
    status: session.status,
    environment: session.environment,
    amount: session.amount,
    currency: session.currency,
    merchantName,
    expiresAt: toIso(session.expiresAt),
  };
}

/** The push message for a session's current state. */
export function toStatusMessage(
  session: SessionRecord,
  merchantName: string,
  account: VirtualAccountRecord | undefined,
  reason: StatusMessage['reason'],
): StatusMessage {
  const accountIsLive = account !== undefined && account.closedAt === null;
  return {
    status: session.status,
    reason,
    session: toPublicSession(session, merchantName),
    virtualAccount: accountIsLive ? toVirtualAccountView(account) : null,
    mismatch:
      session.status === 'mismatch' && session.mismatchReceived !== null
        ? { expectedAmount: session.amount, receivedAmount: session.mismatchReceived }
        : null,
  };
}
