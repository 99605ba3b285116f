import type { Pagination } from '@servicepay/node/protocol';
import { assertOwnedBy } from '../../businesses/ownership.ts';
import { REQUEST_LOG_KEEP, type RequestLogEntry, type StatusClass } from '../../db/request-log.ts';
import { notFound } from '../../errors.ts';
import { unknownCursor } from '../../internal/pagination.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { callerOf } from '../caller.ts';
import { badge, formatEpoch, prettyJson } from '../format.ts';
import { RequestsQuerySchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

/** Requests per page of the list. */
const PAGE_SIZE = 20;

const orUndefined = (value: string | undefined) => (value === '' ? undefined : value);

/**
 * The Requests page (`GET /portal/requests`: the API requests made with the environment's keys, from the
 * request log, newest first) and one request's page. Read only; the log's writer is flushed first, so a request
 * made just now is there.
 */
export const REQUESTS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/requests',
    operationId: 'portalRequests',
    tag: 'Portal',
    summary:
      "Request log: recent API requests made with the environment's keys (search by Request-Id, status class)",
    auth: 'portalSession',
    query: RequestsQuerySchema,
    success: { 200: htmlPage('A page of requests.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, query, res }, { store, requestLog }) => {
      const filters = {
        requestId: orUndefined(query.requestId),
        status: query.status === '' ? undefined : query.status,
        startingAfter: orUndefined(query.startingAfter),
      };
      // Entries wait a moment before they are written: a request made just now is on this page.
      await requestLog?.flush();
      let beforeSeq: number | undefined;
      if (filters.startingAfter !== undefined) {
        const cursor = await store.requestLog.find(filters.startingAfter);
        if (
          !cursor ||
          cursor.businessId !== context.business.id ||
          cursor.environment !== context.environment
        ) {
          throw unknownCursor('a request of this list');
        }
        beforeSeq = cursor.seq;
      }
      const rows = await store.requestLog.list({
        businessId: context.business.id,
        environment: context.environment,
        requestId: filters.requestId,
        statusClass: filters.status,
        beforeSeq,
        limit: PAGE_SIZE + 1,
      });
      const hasMore = rows.length > PAGE_SIZE;
      const data = rows.slice(0, PAGE_SIZE);
      const list = {
        data,
        pagination: { hasMore, nextCursor: hasMore ? (data.at(-1)?.requestId ?? null) : null },
      };
      sendPage(res, requestsPage(context, list, filters, REQUEST_LOG_KEEP));
    },
  }),
  defineOperation({
    method: 'get',
    path: '/portal/requests/{id}',
    operationId: 'portalRequest',
    tag: 'Portal',
    summary: 'One logged request, with the error body of a refusal',
    auth: 'portalSession',
    success: { 200: htmlPage('The request.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, params, res }, { store, requestLog }) => {
      await requestLog?.flush();
      const entry = await store.requestLog.find(params.id);
      if (!entry) throw notFound('request in the log (it keeps the most recent ones only)');
      assertOwnedBy(callerOf(context), entry, 'request');
      sendPage(res, requestDetailPage(context, entry));
    },
  }),
] as const;

const STATUS_CLASSES: StatusClass[] = ['2xx', '3xx', '4xx', '5xx'];

const statusBadgeOf = (status: number): SafeHtml =>
  badge(String(status), status < 300 ? 'good' : status < 400 ? 'info' : status < 500 ? 'warn' : 'bad');

/** The Requests page's own address with its search and cursor. */
function requestsHref(
  filters: { requestId?: string | undefined; status?: StatusClass | undefined },
  startingAfter?: string,
) {
  const params = new URLSearchParams();
  if (filters.requestId) params.set('requestId', filters.requestId);
  if (filters.status) params.set('status', filters.status);
  if (startingAfter) params.set('startingAfter', startingAfter);
  const query = params.toString();
  return `/portal/requests${query ? `?${query}` : ''}`;
}

/**
 * Requests: the environment's recent API requests made with its keys, newest first, searched by `Request-Id`
 * and filtered by status class, a page at a time; each leads to its detail (the error body of a refusal).
 *
 * @example
 * res.send(requestsPage(context, page, { status: '4xx' }, 1000).value);
 */
export function requestsPage(
  context: PortalContext,
  list: { data: RequestLogEntry[]; pagination: Pagination },
  filters: {
    requestId?: string | undefined;
    status?: StatusClass | undefined;
    startingAfter?: string | undefined;
  },
  /** How many requests the log keeps per environment. */
  kept: number,
): SafeHtml {
  const rows = list.data.map(
    (entry) => html`<tr>
  <th scope="row" class="break"><a href="/portal/requests/${entry.requestId}"><span class="method">${entry.method}</span> ${entry.path}</a></th>
  <td data-label="Status">${statusBadgeOf(entry.status)}</td>
  <td data-label="Request-Id"><code>${entry.requestId}</code></td>
  <td data-label="Key"><code class="key">${entry.keyHint}</code></td>
  <td class="num" data-label="Duration">${entry.durationMs} ms</td>
  <td data-label="At">${formatEpoch(entry.createdAt)}</td>
</tr>`,
  );
  const filtered = Boolean(filters.requestId || filters.status);
  return page({
    title: 'Requests',
    context,
    section: 'requests',
    path: '/portal/requests',
    body: html`<h1>Requests <span class="env-chip">${context.environment}</span></h1>
<p class="lead">The last ${kept.toLocaleString('en')} API requests made with your ${context.environment} keys, refused ones
included: paste the <code>Request-Id</code> of an error to see what was sent and answered. Keys show as their
prefix and last four; secrets are never kept.</p>
<form method="get" action="/portal/requests" class="filters" role="search" aria-label="Search requests">
  <div class="field">
    <label for="requestId">Request-Id</label>
    <input id="requestId" name="requestId" type="search" value="${filters.requestId ?? ''}" maxlength="64" placeholder="req_…" spellcheck="false" autocomplete="off">
  </div>
  <div class="field">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="">Any status</option>
      ${STATUS_CLASSES.map((status) =>
        status === filters.status
          ? html`<option value="${status}" selected>${status}</option>`
          : html`<option value="${status}">${status}</option>`,
      )}
    </select>
  </div>
  <button type="submit" class="button">Search</button>
  ${filtered ? html`<a class="button button-quiet" href="/portal/requests">Clear</a>` : ''}
</form>
${
  list.data.length === 0
    ? html`<p class="empty">${filtered || filters.startingAfter ? 'No request matches. The log keeps the most recent requests only.' : `No ${context.environment} requests yet. Each call made with a ${context.environment} key appears here.`}</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="requests-caption" tabindex="0"><table class="stack">
  <caption id="requests-caption">${filters.startingAfter ? 'Older requests' : 'Newest requests first'}</caption>
  <thead><tr><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Request-Id</th><th scope="col">Key</th><th scope="col">Duration</th><th scope="col">At</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<nav class="pager" aria-label="Pages">
  ${filters.startingAfter ? html`<a class="button button-quiet" href="${requestsHref(filters)}">Newest</a>` : ''}
  ${list.pagination.hasMore && list.pagination.nextCursor ? html`<a class="button" href="${requestsHref(filters, list.pagination.nextCursor)}" rel="next">Older requests</a>` : ''}
</nav>`,
  });
}

/**
 * One logged request: method, path, status, `Request-Id`, key, duration, time, and the error body it was
 * answered with (4xx and 5xx).
 *
 * @example
 * res.send(requestDetailPage(context, entry).value);
 */
export function requestDetailPage(context: PortalContext, entry: RequestLogEntry): SafeHtml {
  return page({
    title: `Request ${entry.requestId}`,
    context,
    section: 'requests',
    path: '/portal/requests',
    body: html`<p class="breadcrumb"><a href="/portal/requests">Requests</a> / request</p>
<h1 class="break"><span class="method">${entry.method}</span> ${entry.path} ${statusBadgeOf(entry.status)}</h1>
<dl class="facts">
  <div><dt>Request-Id</dt><dd><code>${entry.requestId}</code></dd></div>
  <div><dt>Status</dt><dd>${entry.status}</dd></div>
  <div><dt>Key</dt><dd><code class="key">${entry.keyHint}</code></dd></div>
  <div><dt>Duration</dt><dd>${entry.durationMs} ms</dd></div>
  <div><dt>Environment</dt><dd>${entry.environment}</dd></div>
  <div><dt>At</dt><dd>${formatEpoch(entry.createdAt)}</dd></div>
</dl>
<section aria-labelledby="answer-title">
  <h2 id="answer-title">${entry.errorBody === null ? 'Answer' : 'Error body'}</h2>
  ${
    entry.errorBody === null
      ? html`<p class="help">Answered ${entry.status}. The log keeps the body of error answers only (4xx, 5xx): a successful answer can carry a client secret or a signing secret.</p>`
      : html`<pre class="payload" tabindex="0" aria-label="Error body"><code>${prettyJson(entry.errorBody)}</code></pre>`
  }
</section>`,
  });
}
