import type { Refund } from '@servicepay/node/protocol';
import type { RefundRecord } from '../db/refunds.ts';
import { toIso } from '../internal/clock.ts';

/** A refund as the merchant sees it (API, webhooks, portal). */
export function toRefundView(refund: RefundRecord): Refund {
  return {
    id: refund.id,
    sessionId: refund.sessionId,
    environment: refund.environment,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status,
    reason: refund.reason,
    failureReason: refund.failureReason,
    createdAt: toIso(refund.createdAt),
    updatedAt: toIso(refund.updatedAt),
  };
}
