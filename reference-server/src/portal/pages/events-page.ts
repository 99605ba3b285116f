import {
  type Pagination,
  SessionStatusSchema,
  type WebhookDelivery,
  type WebhookEndpoint,
  WebhookEventTypeSchema,
} from '@servicepay/node/protocol';
import type { EventRecord } from '../../db/events.ts';
import type { EventDetail } from '../../events/event-history.ts';
import { EventHistory } from '../../events/event-history.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { callerOf } from '../caller.ts';
import { formatEpoch, formatTime, prettyJson } from '../format.ts';
import { EventQuerySchema, EventsQuerySchema, ResendEventFormSchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, type PageOptions, page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';
import { attemptsTable, deliveryBadge } from './endpoint-page.ts';

/** Events per page of the list. */
const PAGE_SIZE = 20;

const orUndefined = (value: string | undefined) => (value === '' ? undefined : value);

/**
 * The Events page (`GET /portal/events`: every event of the environment), one event's page (its exact signed
 * body, each delivery and attempt) and its Resend form (`POST /portal/events/{id}/resend`, through
 * `Webhooks.resend` as `POST /api/events/{id}/resend`). Another environment's event answers 403 through the
 * services' own scope.
 */
export const EVENTS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/events',
    operationId: 'portalEvents',
    tag: 'Portal',
    summary: 'Events page: every event of the environment, newest first (type filter, paging)',
    auth: 'portalSession',
    query: EventsQuerySchema,
    success: { 200: htmlPage('A page of events.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, query, res }, { store }) => {
      const type = orUndefined(query.type);
      const startingAfter = orUndefined(query.startingAfter);
      const list = await new EventHistory(store).list(callerOf(context), {
        limit: PAGE_SIZE,
        type,
        startingAfter,
      });
      sendPage(res, eventsPage(context, list, { type, startingAfter }));
    },
  }),
  defineOperation({
    method: 'get',
    path: '/portal/events/{id}',
    operationId: 'portalEvent',
    tag: 'Portal',
    summary: 'One event: its webhook body, each delivery with every attempt',
    auth: 'portalSession',
    query: EventQuerySchema,
    success: { 200: htmlPage('The event.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, params, query, res }, { store }) => {
      const detail = await new EventHistory(store).detail(callerOf(context), params.id);
      const resent = query.resent !== undefined ? Number(query.resent) : undefined;
      sendPage(res, eventDetailPage(context, detail, resent));
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/events/{id}/resend',
    operationId: 'portalResendEvent',
    tag: 'Portal',
    summary: 'Resend an event to one endpoint, or to every enabled endpoint that takes its type',
    auth: 'portalSession',
    form: { schema: ResendEventFormSchema },
    success: { 303: seeOther('Back to the event, with how many deliveries were queued.') },
    errors: [404, 409],
    handler: async ({ caller: context, params, body, res }, { webhooks }) => {
      // What POST /api/events/{id}/resend does: a new delivery (same event id) to the one endpoint, or to every
      // enabled endpoint that takes the type; another environment's event or endpoint is refused.
      const result = await webhooks.resend(callerOf(context), params.id, orUndefined(body.endpointId));
      // Redirect after the post, so a reload shows the result and sends nothing again.
      res.redirect(303, `/portal/events/${encodeURIComponent(params.id)}?resent=${result.deliveries.length}`);
    },
  }),
] as const;

/** The types the filter offers: every webhook type, then the transitions pushed to the checkout only. */
const TYPE_OPTIONS = [
  ...new Set([
    ...WebhookEventTypeSchema.options,
    ...SessionStatusSchema.options.map((status) => `session.${status}`),
  ]),
];

/** The Events page's own address with its filter and cursor. */
function eventsHref(type: string | undefined, startingAfter?: string): string {
  const params = new URLSearchParams();
  if (type) params.set('type', type);
  if (startingAfter) params.set('startingAfter', startingAfter);
  const query = params.toString();
  return `/portal/events${query ? `?${query}` : ''}`;
}

/**
 * Events: every event of the environment, newest first, filtered by type, a page at a time. Each leads to its
 * page (payload, deliveries, resend).
 *
 * @example
 * res.send(eventsPage(context, page, { type: 'session.successful' }).value);
 */
export function eventsPage(
  context: PortalContext,
  list: { data: EventRecord[]; pagination: Pagination },
  filters: { type?: string | undefined; startingAfter?: string | undefined },
): SafeHtml {
  const rows = list.data.map(
    (event) => html`<tr>
  <th scope="row"><a href="/portal/events/${event.id}"><code>${event.type}</code></a></th>
  <td data-label="Session"><a href="/portal/sessions/${event.sessionId}"><code>${event.sessionId}</code></a></td>
  <td data-label="Event id"><code>${event.id}</code></td>
  <td data-label="Created">${formatEpoch(event.createdAt)}</td>
</tr>`,
  );
  return page({
    title: 'Events',
    context,
    section: 'events',
    path: '/portal/events',
    body: html`<h1>Events <span class="env-chip">${context.environment}</span></h1>
<p class="lead">Every change of a session's status, as it happened. Open one for its payload, each delivery to
your endpoints with every attempt, and to send it again.</p>
<form method="get" action="/portal/events" class="filters" role="search" aria-label="Filter events">
  <div class="field">
    <label for="type">Type</label>
    <select id="type" name="type">
      <option value="">Any type</option>
      ${TYPE_OPTIONS.map((type) =>
        type === filters.type
          ? html`<option value="${type}" selected>${type}</option>`
          : html`<option value="${type}">${type}</option>`,
      )}
    </select>
  </div>
  <button type="submit" class="button">Filter</button>
  ${filters.type ? html`<a class="button button-quiet" href="/portal/events">Clear</a>` : ''}
</form>
${
  list.data.length === 0
    ? html`<p class="empty">${filters.type || filters.startingAfter ? 'No event matches.' : `No ${context.environment} events yet. Each session's changes of status appear here.`}</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="events-caption" tabindex="0"><table class="stack">
  <caption id="events-caption">${filters.startingAfter ? 'Older events' : 'Newest events first'}</caption>
  <thead><tr><th scope="col">Type</th><th scope="col">Session</th><th scope="col">Event id</th><th scope="col">Created</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<nav class="pager" aria-label="Pages">
  ${filters.startingAfter ? html`<a class="button button-quiet" href="${eventsHref(filters.type)}">Newest</a>` : ''}
  ${list.pagination.hasMore && list.pagination.nextCursor ? html`<a class="button" href="${eventsHref(filters.type, list.pagination.nextCursor)}" rel="next">Older events</a>` : ''}
</nav>`,
  });
}

function resendForm(context: PortalContext, eventId: string, endpoint?: WebhookEndpoint): SafeHtml {
  return html`<form method="post" action="/portal/events/${eventId}/resend" class="inline-form">
  ${csrfField(context)}${endpoint ? html`<input type="hidden" name="endpointId" value="${endpoint.id}">` : ''}
  <button type="submit" class="button${endpoint ? ' button-quiet' : ''}"${endpoint ? html` aria-label="Resend to ${endpoint.url}"` : ''}>${endpoint ? 'Resend' : 'Resend to every endpoint'}</button>
</form>`;
}

function deliveryItem(
  context: PortalContext,
  delivery: WebhookDelivery,
  endpoint: WebhookEndpoint | undefined,
): SafeHtml {
  return html`<li class="delivery">
  <div class="delivery-head">
    <h3 class="break">${endpoint ? html`<a href="/portal/webhooks/${endpoint.id}">${endpoint.url}</a>` : html`<span class="muted">Deleted endpoint <code>${delivery.endpointId}</code></span>`} ${deliveryBadge(delivery)}</h3>
    <p class="muted">Delivery <code>${delivery.id}</code> · queued ${formatTime(delivery.createdAt)} · ${delivery.attempts.length} ${delivery.attempts.length === 1 ? 'attempt' : 'attempts'}${delivery.status === 'pending' ? html` · next retry ${delivery.nextAttemptAt ? formatTime(delivery.nextAttemptAt) : html`<span>when the endpoint is enabled</span>`}` : ''}</p>
    ${endpoint?.enabled ? resendForm(context, delivery.eventId, endpoint) : ''}
  </div>
  ${attemptsTable(delivery)}
</li>`;
}

/**
 * One event: what it is, the exact body its webhooks carry (indented, every character escaped), and each
 * delivery to each endpoint with every attempt (time, HTTP status, duration, error, next retry), with a
 * Resend per endpoint and one to every endpoint.
 *
 * @example
 * res.send(eventDetailPage(context, await history.detail(caller, id)).value);
 */
export function eventDetailPage(context: PortalContext, detail: EventDetail, resent?: number): SafeHtml {
  const { event, deliveries } = detail;
  const notice: PageOptions['notice'] =
    resent === undefined
      ? undefined
      : resent === 0
        ? { tone: 'warn', text: 'Nothing was resent: no enabled endpoint takes this type of event.' }
        : {
            tone: 'good',
            text: `Resent: ${resent === 1 ? 'a new delivery is' : `${resent} new deliveries are`} on the way.`,
          };
  return page({
    title: `Event ${event.id}`,
    context,
    section: 'events',
    path: '/portal/events',
    ...(notice ? { notice } : {}),
    body: html`<p class="breadcrumb"><a href="/portal/events">Events</a> / event</p>
<h1 class="break"><code>${event.type}</code></h1>
<dl class="facts">
  <div><dt>Id</dt><dd><code>${event.id}</code></dd></div>
  <div><dt>Session</dt><dd><a href="/portal/sessions/${event.sessionId}"><code>${event.sessionId}</code></a></dd></div>
  <div><dt>Environment</dt><dd>${event.environment}</dd></div>
  <div><dt>Created</dt><dd>${formatEpoch(event.createdAt)}</dd></div>
  ${event.reason ? html`<div><dt>Reason</dt><dd><code>${event.reason}</code></dd></div>` : ''}
</dl>
<section aria-labelledby="payload-title">
  <h2 id="payload-title">${detail.body === undefined ? 'Payload' : 'Webhook body'}</h2>
  ${detail.body === undefined ? html`<p class="help">This type is pushed to the checkout only, never sent by webhook. The session as it was:</p>` : html`<p class="help">What each endpoint receives, signed with <code>X-Service-Signature</code> (indented here).</p>`}
  <pre class="payload" tabindex="0" aria-label="Event payload"><code>${prettyJson(detail.body ?? event.payload)}</code></pre>
</section>
<section aria-labelledby="deliveries-title">
  <h2 id="deliveries-title">Deliveries</h2>
  ${
    detail.sentByWebhook
      ? html`${deliveries.length === 0 ? html`<p class="empty">Not delivered anywhere: no enabled endpoint took <code>${event.type}</code> when it happened.</p>` : html`<ol class="deliveries">${deliveries.map(({ delivery, endpoint }) => deliveryItem(context, delivery, endpoint))}</ol>`}
  <div class="card"><h3>Send it again</h3><p class="help">A new delivery with the same event id to every enabled endpoint that takes <code>${event.type}</code> (receivers de-duplicate by id).</p>${resendForm(context, event.id)}</div>`
      : html`<p class="empty">None: <code>${event.type}</code> is not a webhook event.</p>`
  }
</section>`,
  });
}
