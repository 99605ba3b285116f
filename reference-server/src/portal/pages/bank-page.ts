import type { Session } from '@servicepay/node/protocol';
import { HttpError } from '../../errors.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { assertTestMode, callerOf } from '../caller.ts';
import { formatMoney, formatTime, statusBadge } from '../format.ts';
import { TransferFormSchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, page, sendPage, signInHref } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

/**
 * The Test bank (`GET /portal/bank`) and its transfer form (`POST /portal/bank/transfers`, also on the session
 * page): simulated money, to test sessions only, through `TestTransfers.pay` as `POST /api/test/transfers`.
 */
export const BANK_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/bank',
    operationId: 'portalBank',
    tag: 'Portal',
    summary: 'Test bank page',
    auth: 'portalSession',
    success: { 200: htmlPage('Test sessions that take a transfer now.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, res }, { sessions }) => {
      let open: Session[] = [];
      if (context.environment === 'test') {
        const caller = callerOf(context);
        const waiting = (await sessions.list(caller, { limit: 50, status: 'awaiting_payment' })).data;
        const mismatched = (await sessions.list(caller, { limit: 50, status: 'mismatch' })).data;
        open = [...waiting, ...mismatched]
          .filter(takesTransfer)
          .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      }
      sendPage(res, bankPage(context, open));
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/bank/transfers',
    operationId: 'portalTransfer',
    tag: 'Portal',
    summary: "Send the right or a wrong amount to a test session's account",
    auth: 'portalSession',
    form: { schema: TransferFormSchema },
    success: { 303: seeOther('To the session, with the outcome.') },
    errors: [404, 409],
    handler: async ({ caller: context, body: parsed, res }, { sessions, testTransfers }) => {
      // Simulated money only ever reaches test sessions, and only from a session signed in with a test key.
      assertTestMode(context, 'The test bank moves simulated money to test sessions only.');
      const caller = callerOf(context);
      const session = await sessions.retrieve(caller, parsed.sessionId);
      if (!takesTransfer(session) || !session.virtualAccount) {
        throw new HttpError(
          409,
          'session_not_active',
          `This session takes no transfer now (it is ${session.status}).`,
        );
      }
      const amount = parsed.choice === 'other' ? otherAmount(parsed.amount) : session.amount;
      const transfer = await testTransfers.pay(caller, session.virtualAccount.accountNumber, amount);
      const params = new URLSearchParams({ sent: String(amount), outcome: transfer.outcome });
      if (transfer.returnReason) params.set('reason', transfer.returnReason);
      // Redirect after the post, so a reload shows the result and never sends the money again.
      res.redirect(303, `/portal/sessions/${encodeURIComponent(session.id)}?${params}`);
    },
  }),
] as const;

/** The form's "other amount", in minor units: a whole number above 0. */
function otherAmount(entered: string | undefined): number {
  const amount = Number(entered ?? '');
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new HttpError(
      400,
      'validation_failed',
      'Enter the amount as a whole number of minor units, above 0.',
    );
  }
  return amount;
}

/**
 * Whether the session's current account takes a transfer now.
 *
 * @example
 * sessions.filter(takesTransfer);
 */
export const takesTransfer = (session: Session): boolean =>
  (session.status === 'awaiting_payment' || session.status === 'mismatch') && session.virtualAccount !== null;

/**
 * The two buttons of the test bank for one session: the exact amount, or another amount to see a mismatch.
 *
 * @example
 * html`<section>${transferForm(context, session)}</section>`;
 */
export function transferForm(context: PortalContext, session: Session): SafeHtml {
  const exactId = `exact-${session.id}`;
  const otherId = `other-${session.id}`;
  return html`<div class="transfer-forms">
  <form method="post" action="/portal/bank/transfers" class="inline-form">
    ${csrfField(context)}<input type="hidden" name="sessionId" value="${session.id}"><input type="hidden" name="choice" value="exact">
    <button type="submit" class="button button-primary" id="${exactId}">Send ${formatMoney(session.amount, session.currency)}</button>
  </form>
  <form method="post" action="/portal/bank/transfers" class="inline-form">
    ${csrfField(context)}<input type="hidden" name="sessionId" value="${session.id}"><input type="hidden" name="choice" value="other">
    <label for="${otherId}">Other amount (minor units)</label>
    <input id="${otherId}" name="amount" type="text" inputmode="numeric" pattern="[0-9]{1,15}" required size="12" value="${String(Math.max(1, session.amount - 100))}">
    <button type="submit" class="button">Send this amount</button>
  </form>
</div>`;
}

/**
 * The test bank: every test session with an account that takes money now, and a transfer of the right or a
 * wrong amount to it through the simulated bank (the same signed notification a real bank would send).
 *
 * @example
 * res.send(bankPage(context, openSessions).value);
 */
export function bankPage(context: PortalContext, open: Session[]): SafeHtml {
  const live = context.environment === 'live';
  const rows = open.map(
    (session) => html`<tr>
  <th scope="row"><a href="/portal/sessions/${session.id}">${session.reference}</a><span class="cell-help">${session.payer.name}</span></th>
  <td data-label="Status">${statusBadge(session.status)}</td>
  <td class="num" data-label="Amount">${formatMoney(session.amount, session.currency)}</td>
  <td data-label="Account"><code>${session.virtualAccount?.accountNumber ?? ''}</code><span class="cell-help">until ${formatTime(session.virtualAccount?.expiresAt)}</span></td>
  <td data-label="Send">${transferForm(context, session)}</td>
</tr>`,
  );
  return page({
    title: 'Test bank',
    context,
    section: 'bank',
    path: '/portal/bank',
    body: html`<h1>Test bank</h1>
<p class="lead">Play the payer: send a transfer to a session's virtual account through the simulated bank. The bank
credits only the exact amount and returns anything else, then notifies ServicePay with a signed notification, just
as a real bank would: the session turns <strong>successful</strong> or <strong>mismatch</strong>, the open checkout
updates, and your webhooks fire.</p>
${
  live
    ? html`<p class="empty">The test bank moves simulated money only, so it works on test data, from a portal session opened with a test key. <a href="${signInHref('test', '/portal/bank')}">Sign in with your test secret key</a> to use it.</p>`
    : open.length === 0
      ? html`<p class="empty">No test session is waiting for money. A session gets its account when the checkout opens it (the widget, or <code>POST /api/widget/bootstrap</code>).</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="bank-caption" tabindex="0"><table class="stack">
  <caption id="bank-caption">Sessions waiting for a transfer</caption>
  <thead><tr><th scope="col">Reference</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Account</th><th scope="col">Send</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}`,
  });
}
