import type { Pagination, Session, SessionStatus } from '@servicepay/node/protocol';
import { SessionStatusSchema } from '@servicepay/node/protocol';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { callerOf } from '../caller.ts';
import { formatMoney, formatTime, statusBadge } from '../format.ts';
import { SessionsQuerySchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

const STATUS_OPTIONS = SessionStatusSchema.options;

/** The Sessions list (`GET /portal/sessions`), read through `SessionService.list` as `GET /api/sessions`. */
export const SESSIONS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/sessions',
    operationId: 'portalSessions',
    tag: 'Portal',
    summary: 'Sessions page (filters, paging)',
    auth: 'portalSession',
    query: SessionsQuerySchema,
    success: { 200: htmlPage('A page of sessions.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller, query, res }, { sessions }) => {
      const status = query.status === '' ? undefined : query.status;
      const reference = query.reference === '' ? undefined : query.reference;
      const startingAfter = query.startingAfter === '' ? undefined : query.startingAfter;
      const list = await sessions.list(callerOf(caller), { limit: 20, status, reference, startingAfter });
      sendPage(res, sessionsPage(caller, list, { status, reference, startingAfter }));
    },
  }),
] as const;

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
