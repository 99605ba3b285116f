import type { Pagination, Refund, Session, SessionStatus } from '@servicepay/node/protocol';
import { SessionStatusSchema, TERMINAL_SESSION_STATUSES } from '@servicepay/node/protocol';
import type { EventRecord } from '../../db/events.ts';
import { formatEpoch, formatMoney, formatTime, statusBadge } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, page } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';
import { takesTransfer, transferForm } from './bank-page.ts';
import { type RefundReview, refundsSection } from './refunds-section.ts';

const STATUS_OPTIONS = SessionStatusSchema.options;

/**
 * Sessions: the environment's sessions, newest first, filtered by status and reference, a page at a time.
 *
 * @example
 * res.send(sessionsPage(context, page, { status: 'successful' }).value);
 */
export function sessionsPage(
  context: PortalContext,
  list: { data: Session[]; pagination: Pagination },
  filters: {
    status?: SessionStatus | undefined;
    reference?: string | undefined;
    startingAfter?: string | undefined;
  },
): SafeHtml {
  const query = (cursor: string) => {
    const params = new URLSearchParams();
    if (filters.status) params.set('status', filters.status);
    if (filters.reference) params.set('reference', filters.reference);
    params.set('startingAfter', cursor);
    return `/portal/sessions?${params}`;
  };
  const rows = list.data.map(
    (session) => html`<tr>
  <th scope="row"><a href="/portal/sessions/${session.id}">${session.reference}</a></th>
  <td data-label="Status">${statusBadge(session.status)}</td>
  <td class="num" data-label="Amount">${formatMoney(session.amount, session.currency)}</td>
  <td data-label="Payer">${session.payer.name}<span class="cell-help">${session.payer.email}</span></td>
  <td data-label="Created">${formatTime(session.createdAt)}</td>
</tr>`,
  );
  return page({
    title: 'Sessions',
    context,
    section: 'sessions',
    path: '/portal/sessions',
    body: html`<h1>Sessions <span class="env-chip">${context.environment}</span></h1>
<form method="get" action="/portal/sessions" class="filters" role="search" aria-label="Filter sessions">
  <div class="field">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="">Any status</option>
      ${STATUS_OPTIONS.map((status) =>
        status === filters.status
          ? html`<option value="${status}" selected>${status}</option>`
          : html`<option value="${status}">${status}</option>`,
      )}
    </select>
  </div>
  <div class="field">
    <label for="reference">Reference</label>
    <input id="reference" name="reference" type="search" value="${filters.reference ?? ''}" maxlength="100">
  </div>
  <button type="submit" class="button">Filter</button>
  ${filters.status || filters.reference ? html`<a class="button button-quiet" href="/portal/sessions">Clear</a>` : ''}
</form>
${
  list.data.length === 0
    ? html`<p class="empty">${filters.status || filters.reference || filters.startingAfter ? 'No session matches.' : `No ${context.environment} sessions yet. Create one with POST /api/widget/sessions and a ${context.environment} secret key.`}</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="sessions-caption" tabindex="0"><table class="stack">
  <caption id="sessions-caption">${filters.startingAfter ? 'Older sessions' : 'Newest sessions first'}</caption>
  <thead><tr><th scope="col">Reference</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Payer</th><th scope="col">Created</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<nav class="pager" aria-label="Pages">
  ${filters.startingAfter ? html`<a class="button button-quiet" href="/portal/sessions${filters.status || filters.reference ? `?${new URLSearchParams({ ...(filters.status ? { status: filters.status } : {}), ...(filters.reference ? { reference: filters.reference } : {}) })}` : ''}">Newest</a>` : ''}
  ${list.pagination.hasMore && list.pagination.nextCursor ? html`<a class="button" href="${query(list.pagination.nextCursor)}" rel="next">Older sessions</a>` : ''}
</nav>`,
  });
}

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
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; text: SafeHtml | string },
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
