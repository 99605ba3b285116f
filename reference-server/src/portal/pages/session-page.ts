import type { Refund, Session } from '@servicepay/node/protocol';
import { SessionStatusSchema, TERMINAL_SESSION_STATUSES } from '@servicepay/node/protocol';
import type { EventRecord } from '../../db/events.ts';
import { HttpError } from '../../errors.ts';
import { validationError } from '../../middleware/classify-error.ts';
import { asHttpError } from '../../middleware/domain-error-status.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import type { PortalServices } from '../../routes/portal-deps.ts';
import { assertTestMode, callerOf } from '../caller.ts';
import { formatEpoch, formatMoney, formatTime, statusBadge } from '../format.ts';
import { ExpireFormSchema, RefundFormSchema, SessionDetailQuerySchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';
import { takesTransfer, transferForm } from './bank-page.ts';
import { type RefundReview, refundsSection } from './refunds-section.ts';

/** A note at the top of the session page: how a form the payer or merchant just sent turned out. */
type Notice = { tone: 'good' | 'warn' | 'bad' | 'info'; text: SafeHtml | string };

/** The session page with its history and refunds, and a note or a refund review to confirm. */
async function sessionPage(
  { store, sessions, refunds }: Pick<PortalServices, 'store' | 'sessions' | 'refunds'>,
  context: PortalContext,
  sessionId: string,
  options: {
    notice?: (session: Session, listed: readonly Refund[]) => Notice | undefined;
    review?: RefundReview;
  },
) {
  const caller = callerOf(context);
  const session = await sessions.retrieve(caller, sessionId);
  const history = await store.events.forSessionAfter(session.id, 0);
  const listed = (await refunds.list(caller, { sessionId: session.id, limit: 100 })).data;
  return sessionDetailPage(context, session, history, options.notice?.(session, listed), {
    refunds: listed,
    ...(options.review ? { review: options.review } : {}),
  });
}

/**
 * One session's page (`GET /portal/sessions/{id}`) and its forms: test mode's "expire now"
 * (`POST …/expire`, through `TestEndings.expire` as `POST /api/test/sessions/{id}/expire`) and the Refund form
 * (`POST …/refunds`: `review` shows the page again with what would be refunded and a confirm button; `confirm`
 * refunds through `RefundService.create` as the API does: the same checks, the KYC rule for live, the audit
 * entry naming the portal session's key). A refusal (more than is left, a session not paid) shows the page
 * again with the service's message.
 */
export const SESSION_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/sessions/{id}',
    operationId: 'portalSession',
    tag: 'Portal',
    summary: 'One session with its status history and account',
    auth: 'portalSession',
    query: SessionDetailQuerySchema,
    success: { 200: htmlPage('The session.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, params, query, res }, deps) => {
      const notice = (session: Session, listed: readonly Refund[]) => {
        const refunded = listed.find((refund) => refund.id === query.refund);
        if (refunded) return refundNotice(refunded);
        return transferNotice(session, query) ?? endedNotice(session, query);
      };
      sendPage(res, await sessionPage(deps, context, params.id, { notice }));
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/sessions/{id}/expire',
    operationId: 'portalExpire',
    tag: 'Portal',
    summary: "End a test session's account countdown or lifetime now (as the test helpers do)",
    auth: 'portalSession',
    form: { schema: ExpireFormSchema },
    success: { 303: seeOther('To the session, with a note of what ended.') },
    errors: [404, 409],
    handler: async ({ caller: context, params, body, res }, { testEndings }) => {
      // Test mode only, like the test bank: only a session signed in with a test key.
      assertTestMode(context, 'Only test sessions can be expired on demand.');
      const session = await testEndings.expire(callerOf(context), params.id, body.ending);
      // Redirect after the post, so a reload shows the result and ends nothing again.
      res.redirect(303, `/portal/sessions/${encodeURIComponent(session.id)}?ended=${body.ending}`);
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/sessions/{id}/refunds',
    operationId: 'portalRefund',
    tag: 'Portal',
    summary: 'Refund a successful session: `review` shows what would go back, `confirm` refunds it',
    description:
      "The confirm refunds only while the session's refunds still hold `expectedRefunded` (what the review showed): a second press refunds nothing more (409). A refusal (more than is left, not paid) shows the session page again with the service's message.",
    auth: 'portalSession',
    form: {
      schema: RefundFormSchema,
      // Another business's or environment's session is refused before the form is looked at.
      invalid: async (error, { caller: context, params }, { sessions }) => {
        await sessions.retrieve(callerOf(context), params.id);
        throw validationError(error, 'form');
      },
    },
    success: {
      200: htmlPage('The session page with the refund to confirm.'),
      303: seeOther('To the session, with a note of how the refund ended.'),
    },
    errors: [404, 409],
    handler: async ({ caller: context, params, body: form, res }, deps) => {
      const sessionId = params.id;
      // Another business's or environment's session is refused first.
      await deps.sessions.retrieve(callerOf(context), sessionId);
      const requested = form.amount === '' ? undefined : Number(form.amount);
      const reason = form.reason === '' ? undefined : form.reason;
      try {
        if (form.step === 'review') {
          const review = await deps.refunds.review(callerOf(context), sessionId, requested);
          return sendPage(
            res,
            await sessionPage(deps, context, sessionId, { review: { ...review, reason } }),
          );
        }
        if (form.expectedRefunded === undefined) {
          throw new HttpError(400, 'validation_failed', 'Review the refund first, then confirm it.');
        }
        const refund = await deps.refunds.create(
          callerOf(context),
          sessionId,
          { ...(requested === undefined ? {} : { amount: requested }), ...(reason ? { reason } : {}) },
          { expectedAmountRefunded: Number(form.expectedRefunded) },
        );
        // Redirect after the post: a reload shows the refund and refunds nothing again.
        res.redirect(303, `/portal/sessions/${encodeURIComponent(sessionId)}?refund=${refund.id}`);
      } catch (raised) {
        const error = asHttpError(raised);
        if (!(error instanceof HttpError) || (error.status !== 400 && error.status !== 409)) throw raised;
        const refusal: Notice = { tone: 'bad', text: error.message };
        sendPage(res, await sessionPage(deps, context, sessionId, { notice: () => refusal }), error.status);
      }
    },
  }),
] as const;

/**
 * Test mode's "expire now" for one open test session: its account's countdown (while an account takes money)
 * or its whole lifetime, ended at once as at their natural end (`POST /portal/sessions/{id}/expire`).
 *
 * @example
 * html`<main>${expireForm(context, session)}</main>`;
 */
function expireForm(context: PortalContext, session: Session): SafeHtml {
  return html`<section class="card" aria-labelledby="endings-title">
  <h2 id="endings-title">Test endings</h2>
  <p class="help">Run a clock out now instead of waiting: the open checkout and your webhooks see exactly what a real expiry sends.</p>
  <form method="post" action="/portal/sessions/${session.id}/expire" class="inline-form">
    ${csrfField(context)}
    ${takesTransfer(session) ? html`<button type="submit" class="button" name="ending" value="account">Expire the account now</button>` : ''}
    <button type="submit" class="button" name="ending" value="session">Expire the session now</button>
  </form>
</section>`;
}

const REASONS: Record<string, string> = {
  account_expired: 'the account ran out with no transfer',
  cancelled_by_payer: 'the payer closed the checkout',
  cancelled_by_merchant: 'cancelled through the API',
};

/**
 * One session: amount, payer, metadata, its virtual account, its status history from the events table,
 * (test data) the bank's transfer buttons, and, once paid, its refunds and the Refund form.
 *
 * @example
 * res.send(sessionDetailPage(context, session, events).value);
 */
export function sessionDetailPage(
  context: PortalContext,
  session: Session,
  history: EventRecord[],
  notice?: Notice,
  refunds: { refunds: readonly Refund[]; review?: RefundReview } = { refunds: [] },
): SafeHtml {
  const account = session.virtualAccount;
  const metadata = Object.entries(session.metadata);
  return page({
    title: `Session ${session.reference}`,
    context,
    section: 'sessions',
    path: '/portal/sessions',
    ...(notice ? { notice } : {}),
    body: html`<p class="breadcrumb"><a href="/portal/sessions">Sessions</a> / ${session.reference}</p>
<h1 class="break">${session.reference} ${statusBadge(session.status)}</h1>
<dl class="facts">
  <div><dt>Amount</dt><dd>${formatMoney(session.amount, session.currency)} <span class="muted">(${session.amount} minor units)</span></dd></div>
  <div><dt>Id</dt><dd><code>${session.id}</code></dd></div>
  <div><dt>Payer</dt><dd>${session.payer.name}<br><span class="muted">${session.payer.email}${session.payer.phone ? ` · ${session.payer.phone}` : ''}</span></dd></div>
  <div><dt>Environment</dt><dd>${session.environment}</dd></div>
  ${session.paymentLink ? html`<div><dt>Payment link</dt><dd><a href="/portal/payment-links/${session.paymentLink}"><code>${session.paymentLink}</code></a></dd></div>` : ''}
  <div><dt>Created</dt><dd>${formatTime(session.createdAt)}</dd></div>
  <div><dt>Session ends</dt><dd>${formatTime(session.expiresAt)}</dd></div>
  <div><dt>Paid</dt><dd>${formatTime(session.paidAt)}</dd></div>
  ${session.lastMismatch ? html`<div><dt>Last wrong transfer</dt><dd>${formatMoney(session.lastMismatch.receivedAmount, session.currency)} received, ${formatMoney(session.lastMismatch.expectedAmount, session.currency)} expected (returned by the bank)</dd></div>` : ''}
</dl>
<div class="columns">
<section class="card" aria-labelledby="account-title">
  <h2 id="account-title">Virtual account</h2>
  ${
    account
      ? html`<dl class="facts facts-tight">
    <div><dt>Bank</dt><dd>${account.bankName}</dd></div>
    <div><dt>Account number</dt><dd><code>${account.accountNumber}</code></dd></div>
    <div><dt>Account name</dt><dd>${account.accountName}</dd></div>
    <div><dt>Open until</dt><dd>${formatTime(account.expiresAt)}</dd></div>
  </dl>
  ${
    context.environment === 'test' && session.environment === 'test'
      ? takesTransfer(session)
        ? html`<h3>Test bank</h3><p class="help">Send the exact amount to see it paid, or another amount to see a mismatch.</p>${transferForm(context, session)}`
        : html`<p class="help">This account takes no transfer now (the session is ${session.status}).</p>`
      : ''
  }`
      : html`<p class="empty">No account yet: one is provisioned when the checkout opens the session.</p>`
  }
</section>
<section class="card" aria-labelledby="metadata-title">
  <h2 id="metadata-title">Metadata</h2>
  ${
    metadata.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<dl class="facts facts-tight">${metadata.map(([key, value]) => html`<div><dt>${key}</dt><dd class="break">${value}</dd></div>`)}</dl>`
  }
</section>
</div>
${session.status === 'successful' || refunds.refunds.length > 0 ? refundsSection(context, session, refunds.refunds, refunds.review) : ''}
${context.environment === 'test' && session.environment === 'test' && !TERMINAL_SESSION_STATUSES.includes(session.status) ? expireForm(context, session) : ''}
<section aria-labelledby="history-title">
  <h2 id="history-title">Status history</h2>
  <ol class="timeline">
    <li><span class="timeline-status">${statusBadge('pending')}</span> Created ${formatTime(session.createdAt)}</li>
    ${history.map((event) => {
      const status = event.type.replace(/^session\./, '');
      const parsed = SessionStatusSchema.safeParse(status);
      return html`<li><span class="timeline-status">${parsed.success ? statusBadge(parsed.data) : status}</span> ${formatEpoch(event.createdAt)}${event.reason ? html` · ${REASONS[event.reason] ?? event.reason}` : ''} <span class="muted">· event <code>${event.id}</code></span></li>`;
    })}
  </ol>
</section>`,
  });
}

/** The note after the Refund form's confirm: how the bank answered. */
function refundNotice(refund: Refund): { tone: 'good' | 'bad' | 'info'; text: SafeHtml } {
  const amount = formatMoney(refund.amount, refund.currency);
  if (refund.status === 'succeeded')
    return { tone: 'good', text: html`Refunded ${amount}: the payer's account has it back (${refund.id}).` };
  if (refund.status === 'failed')
    return {
      tone: 'bad',
      text: html`The bank refused the refund of ${amount} (${refund.failureReason ?? 'refused'}): nothing moved, and the amount can be refunded again.`,
    };
  return {
    tone: 'info',
    text: html`Refund of ${amount} sent to the bank; its answer is on its way (${refund.id}).`,
  };
}

/** The note after an "expire now" button: which clock ended, and the session's status now. */
function endedNotice(
  session: Session,
  query: { ended?: 'session' | 'account' | undefined },
): { tone: 'info'; text: SafeHtml } | undefined {
  if (!query.ended) return undefined;
  return query.ended === 'session'
    ? { tone: 'info', text: html`The session's lifetime was ended now. It is ${session.status}.` }
    : {
        tone: 'info',
        text: html`The account's countdown was ended now. The session is ${session.status}: the checkout offers a new account.`,
      };
}

function transferNotice(
  session: Session,
  query: { sent?: string | undefined; outcome?: string | undefined; reason?: string | undefined },
): { tone: 'good' | 'warn'; text: SafeHtml } | undefined {
  if (!query.sent || !query.outcome) return undefined;
  const sent = formatMoney(Number(query.sent), session.currency);
  if (query.outcome === 'credited') {
    return {
      tone: 'good',
      text: html`Sent ${sent}: the bank credited it. The session is now ${session.status}.`,
    };
  }
  if (query.reason === 'amount_mismatch') {
    return {
      tone: 'warn',
      text: html`Sent ${sent}: not the session amount, so the bank returned it. The session is now ${session.status}.`,
    };
  }
  return { tone: 'warn', text: html`Sent ${sent}: the account was closed, so the bank returned it.` };
}
