import type { Refund, RefundReason, Session } from '@servicepay/node/protocol';
import { badge, formatMoney, formatTime } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

const REASONS: Record<RefundReason, string> = {
  requested_by_customer: 'Requested by the customer',
  duplicate: 'Duplicate payment',
  fraudulent: 'Fraudulent payment',
  other: 'Other',
};

const STATUS_TONES = { pending: 'info', succeeded: 'good', failed: 'bad' } as const;

/** What the Refund form asks to confirm: the amount it would refund, and the session's refunds as reviewed. */
export interface RefundReview {
  amount: number;
  reason: RefundReason | undefined;
  amountRefunded: number;
}

/**
 * The session page's Refunds card: what was paid and refunded, the session's refunds with how each ended, and
 * (a successful session with money left) the Refund form, which reviews first and refunds only once
 * confirmed (`review` given: the confirm step).
 *
 * @example
 * refundsSection(context, session, refunds); // inside sessionDetailPage's body
 */
export function refundsSection(
  context: PortalContext,
  session: Session,
  refunds: readonly Refund[],
  review?: RefundReview,
): SafeHtml {
  const refunded = session.amountRefunded ?? 0;
  const left = session.amount - refunded;
  const money = (amount: number) => formatMoney(amount, session.currency);
  return html`<section class="card" aria-labelledby="refunds-title">
  <h2 id="refunds-title">Refunds</h2>
  <p class="help">Refunded ${money(refunded)} of ${money(session.amount)} (pending refunds count until the bank answers; a refused one is refundable again).</p>
  ${
    refunds.length === 0
      ? html`<p class="empty">No refunds yet.</p>`
      : html`<ol class="timeline">${refunds.map(
          (refund) =>
            html`<li>${badge(refund.status, STATUS_TONES[refund.status])} ${money(refund.amount)} <code>${refund.id}</code> · ${formatTime(refund.createdAt)}${refund.reason ? ` · ${REASONS[refund.reason]}` : ''}${refund.failureReason ? html` · <strong>refused by the bank: ${refund.failureReason.replaceAll('_', ' ')}</strong>` : ''}</li>`,
        )}</ol>`
  }
  ${left > 0 ? (review ? confirmForm(context, session, review) : refundForm(context, session, left)) : ''}
</section>`;
}

function refundForm(context: PortalContext, session: Session, left: number): SafeHtml {
  return html`<form method="post" action="/portal/sessions/${session.id}/refunds" class="form">
    ${csrfField(context)}<input type="hidden" name="step" value="review">
    <div class="field"><label for="refund-amount">Amount to refund (minor units, at most ${String(left)}: ${formatMoney(left, session.currency)})</label>
    <input id="refund-amount" name="amount" type="text" inputmode="numeric" pattern="[0-9]{1,15}" required size="12" value="${String(left)}"></div>
    <div class="field"><label for="refund-reason">Reason</label>
    <select id="refund-reason" name="reason"><option value="">No reason given</option>${Object.entries(REASONS).map(([value, label]) => html`<option value="${value}">${label}</option>`)}</select></div>
    <button type="submit" class="button">Review refund</button>
  </form>`;
}

function confirmForm(context: PortalContext, session: Session, review: RefundReview): SafeHtml {
  return html`<form method="post" action="/portal/sessions/${session.id}/refunds" class="form" role="alert">
    ${csrfField(context)}
    <input type="hidden" name="step" value="confirm">
    <input type="hidden" name="amount" value="${String(review.amount)}">
    <input type="hidden" name="reason" value="${review.reason ?? ''}">
    <input type="hidden" name="expectedRefunded" value="${String(review.amountRefunded)}">
    <p>Send <strong>${formatMoney(review.amount, session.currency)}</strong> back to the account ${session.payer.name} paid from? The bank moves the money at once; it cannot be taken back.</p>
    <button type="submit" class="button button-danger">Confirm refund</button>
    <a class="button button-quiet" href="/portal/sessions/${session.id}">Cancel</a>
  </form>`;
}
