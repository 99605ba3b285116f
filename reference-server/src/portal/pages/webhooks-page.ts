import {
  type Pagination,
  type WebhookDelivery,
  type WebhookEndpoint,
  WebhookEventTypeSchema,
} from '@servicepay/node/protocol';
import { MAX_ENDPOINTS_PER_ENVIRONMENT } from '../../events/webhooks.ts';
import { badge, formatSpan, formatTime } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, type PageOptions, page } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

/** `a`, `a and b`, `a, b and c`, each as code. */
const codeList = (items: readonly string[]): SafeHtml =>
  html`${items.map(
    (item, index) =>
      html`${index === 0 ? '' : index === items.length - 1 ? ' and ' : ', '}<code>${item}</code>`,
  )}`;

const endpointState = (endpoint: WebhookEndpoint): SafeHtml =>
  endpoint.enabled
    ? badge('Enabled', 'good')
    : badge(endpoint.disabledReason === 'failing' ? 'Disabled: kept failing' : 'Disabled', 'bad');

/**
 * Webhooks: the environment's endpoints, and a form to add one (its signing secret shown once).
 *
 * @example
 * res.send(webhooksPage(context, endpoints, retrySpanMs(RETRY_SCHEDULES.standard)).value);
 */
export function webhooksPage(
  context: PortalContext,
  endpoints: WebhookEndpoint[],
  /** How long the service keeps retrying a delivery: its retry schedule's delays added up. */
  retrySpanMs: number,
  options: {
    created?: { endpoint: WebhookEndpoint; secret: string };
    error?: string;
    url?: string;
    /** After the endpoint page's delete form. */
    deleted?: boolean;
  } = {},
): SafeHtml {
  const rows = endpoints.map(
    (endpoint) => html`<tr>
  <th scope="row" class="break"><a href="/portal/webhooks/${endpoint.id}">${endpoint.url}</a>${endpoint.description ? html`<span class="cell-help">${endpoint.description}</span>` : ''}</th>
  <td data-label="Events">${endpoint.events.map((type) => html`<code class="tag">${type}</code> `)}</td>
  <td data-label="State">${endpointState(endpoint)}</td>
  <td data-label="Added">${formatTime(endpoint.createdAt)}</td>
</tr>`,
  );
  const notice = options.created
    ? {
        tone: 'good' as const,
        text: html`<p><strong>Endpoint added.</strong> Its signing secret, shown this once here (you can reveal it again on the endpoint's page):</p>
        <p class="secret-line"><code id="new-secret" class="secret">${options.created.secret}</code>
        <button type="button" class="button button-quiet" data-copy="new-secret" hidden>Copy</button></p>`,
      }
    : options.error
      ? { tone: 'bad' as const, text: options.error }
      : options.deleted
        ? { tone: 'good' as const, text: 'Endpoint deleted: nothing more is sent to its URL.' }
        : undefined;
  return page({
    title: 'Webhooks',
    context,
    section: 'webhooks',
    path: '/portal/webhooks',
    ...(notice ? { notice } : {}),
    body: html`<h1>Webhooks <span class="env-chip">${context.environment}</span></h1>
<p class="lead">ServicePay posts ${codeList(WebhookEventTypeSchema.options)} to these URLs, signed with <code>X-Service-Signature</code>,
retrying for ${formatSpan(retrySpanMs)}. Every event, its payload and each delivery attempt: <a href="/portal/events">Events</a>;
each endpoint's deliveries: its page.</p>
${
  endpoints.length === 0
    ? html`<p class="empty">No endpoints in ${context.environment} yet.</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="endpoints-caption" tabindex="0"><table class="stack">
  <caption id="endpoints-caption">Endpoints</caption>
  <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Added</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<section class="card" aria-labelledby="add-endpoint">
  <h2 id="add-endpoint">Add an endpoint</h2>
  <form method="post" action="/portal/webhooks" class="form">
    ${csrfField(context)}
    <div class="field">
      <label for="url">URL</label>
      <input id="url" name="url" type="url" required value="${options.url ?? ''}" placeholder="https://example.com/webhooks/servicepay" aria-describedby="url-help">
      <p class="help" id="url-help">${context.environment === 'live' ? 'Live endpoints must use https.' : 'Test endpoints may be http, including 127.0.0.1 for a receiver on your machine.'}</p>
    </div>
    <div class="field">
      <label for="description">Description <span class="muted">(optional)</span></label>
      <input id="description" name="description" type="text" maxlength="500">
    </div>
    <button type="submit" class="button button-primary">Add endpoint</button>
  </form>
</section>`,
  });
}

/**
 * A delivery's attempts, oldest first: when, the HTTP status (or none), how long, the error or the answer's
 * excerpt. On a narrow screen each attempt is a card (`table.stack`).
 *
 * @example
 * html`<li>${attemptsTable(delivery)}</li>`;
 */
export function attemptsTable(delivery: WebhookDelivery): SafeHtml {
  if (delivery.attempts.length === 0) return html`<p class="muted">No attempt yet.</p>`;
  return html`<div class="table-wrap" role="region" aria-label="Attempts of ${delivery.id}" tabindex="0"><table class="compact stack">
  <caption class="visually-hidden">Attempts of delivery ${delivery.id}</caption>
  <thead><tr><th scope="col">#</th><th scope="col">At</th><th scope="col">Answer</th><th scope="col">Time</th><th scope="col">Error or response</th></tr></thead>
  <tbody>${delivery.attempts.map(
    (attempt, index) => html`<tr>
    <td data-label="Attempt">${index + 1}</td>
    <td data-label="At">${formatTime(attempt.at)}</td>
    <td data-label="Answer">${attempt.statusCode === null ? badge('no answer', 'bad') : badge(String(attempt.statusCode), attempt.statusCode >= 200 && attempt.statusCode < 300 ? 'good' : 'bad')}</td>
    <td data-label="Time">${attempt.latencyMs} ms</td>
    <td class="excerpt" data-label="Error or response">${attempt.error ?? attempt.responseExcerpt ?? ''}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

const DELIVERY_TONE = { succeeded: 'good', pending: 'info', failed: 'bad' } as const;

/**
 * A delivery's status as a badge.
 *
 * @example
 * deliveryBadge(delivery); // <span class="badge badge-good">succeeded</span>
 */
export const deliveryBadge = (delivery: WebhookDelivery): SafeHtml =>
  badge(delivery.status, DELIVERY_TONE[delivery.status]);

/**
 * One endpoint: its details, its signing secret on demand (after a confirm), its deliveries with every
 * attempt, each of which can be resent, and deleting it (after a confirm).
 *
 * @example
 * res.send(endpointPage(context, endpoint, page).value);
 */
export function endpointPage(
  context: PortalContext,
  endpoint: WebhookEndpoint,
  deliveries: { data: WebhookDelivery[]; pagination: Pagination },
  options: { secret?: string; resent?: string; changed?: 'enabled' | 'disabled'; error?: string } = {},
): SafeHtml {
  const secretSection = options.secret
    ? html`<p class="secret-line"><code id="endpoint-secret" class="secret">${options.secret}</code>
      <button type="button" class="button button-quiet" data-copy="endpoint-secret" hidden>Copy</button></p>
      <p class="help">Verify <code>X-Service-Signature</code> with it before reading a payload. Reload the page to hide it.</p>`
    : html`<form method="post" action="/portal/webhooks/${endpoint.id}/reveal" class="form">
      ${csrfField(context)}
      <div class="check">
        <input type="checkbox" id="confirm-reveal" name="confirm" value="yes" required>
        <label for="confirm-reveal">Show the secret on this screen (make sure nobody is looking)</label>
      </div>
      <button type="submit" class="button">Reveal signing secret</button>
    </form>`;
  const items = deliveries.data.map(
    (delivery) => html`<li class="delivery">
  <div class="delivery-head">
    <h3><code>${delivery.eventType}</code> ${deliveryBadge(delivery)}</h3>
    <p class="muted">Delivery <code>${delivery.id}</code> · event <a href="/portal/events/${delivery.eventId}"><code>${delivery.eventId}</code></a> · queued ${formatTime(delivery.createdAt)}
    ${delivery.nextAttemptAt ? html` · next attempt ${formatTime(delivery.nextAttemptAt)}` : ''}</p>
    <form method="post" action="/portal/webhooks/${endpoint.id}/resend" class="inline-form">
      ${csrfField(context)}<input type="hidden" name="eventId" value="${delivery.eventId}">
      <button type="submit" class="button button-quiet" aria-label="Resend event ${delivery.eventId}">Resend</button>
    </form>
  </div>
  ${attemptsTable(delivery)}
</li>`,
  );
  // One notice at most: what went wrong first, else what the last action did.
  const notice: PageOptions['notice'] = options.error
    ? { tone: 'bad', text: options.error }
    : options.resent
      ? { tone: 'good', text: html`Resent: a new delivery <code>${options.resent}</code> is on its way.` }
      : options.changed === 'enabled'
        ? { tone: 'good', text: 'Endpoint enabled: deliveries held while it was off are on their way.' }
        : options.changed === 'disabled'
          ? {
              tone: 'good',
              text: 'Endpoint disabled: new events are not queued for it until you enable it again.',
            }
          : undefined;
  return page({
    title: `Endpoint ${endpoint.url}`,
    context,
    section: 'webhooks',
    path: '/portal/webhooks',
    ...(notice ? { notice } : {}),
    body: html`<p class="breadcrumb"><a href="/portal/webhooks">Webhooks</a> / endpoint</p>
<h1 class="break">${endpoint.url}</h1>
<dl class="facts">
  <div><dt>Id</dt><dd><code>${endpoint.id}</code></dd></div>
  <div><dt>State</dt><dd>${endpointState(endpoint)}</dd></div>
  <div><dt>Events</dt><dd>${endpoint.events.map((type) => html`<code class="tag">${type}</code> `)}</dd></div>
  <div><dt>Environment</dt><dd>${endpoint.environment}</dd></div>
  <div><dt>Description</dt><dd>${endpoint.description ?? html`<span class="muted">—</span>`}</dd></div>
  <div><dt>Added</dt><dd>${formatTime(endpoint.createdAt)}</dd></div>
</dl>
<form method="post" action="/portal/webhooks/${endpoint.id}/state" class="inline-form">
  ${csrfField(context)}<input type="hidden" name="enabled" value="${endpoint.enabled ? 'false' : 'true'}">
  <button type="submit" class="button${endpoint.enabled ? '' : ' button-primary'}">${endpoint.enabled ? 'Disable endpoint' : 'Enable endpoint'}</button>
</form>
<section class="card" aria-labelledby="secret-title">
  <h2 id="secret-title">Signing secret</h2>
  ${secretSection}
</section>
<section aria-labelledby="deliveries-title">
  <h2 id="deliveries-title">Deliveries</h2>
  ${items.length === 0 ? html`<p class="empty">Nothing delivered yet. Each ${codeList(endpoint.events)} event of ${endpoint.environment} appears here as it is sent.</p>` : html`<ol class="deliveries">${items}</ol>`}
  ${deliveries.pagination.hasMore && deliveries.pagination.nextCursor ? html`<p><a class="button" href="/portal/webhooks/${endpoint.id}?startingAfter=${deliveries.pagination.nextCursor}">Older deliveries</a></p>` : ''}
</section>
<section class="card" aria-labelledby="delete-title">
  <h2 id="delete-title">Delete endpoint</h2>
  <p class="help">ServicePay stops sending to this URL: deliveries still waiting are marked failed, and the endpoint
  no longer counts toward the ${MAX_ENDPOINTS_PER_ENVIRONMENT} a business may have in ${endpoint.environment}. This cannot be undone.</p>
  <form method="post" action="/portal/webhooks/${endpoint.id}/delete" class="form">
    ${csrfField(context)}
    <div class="check">
      <input type="checkbox" id="confirm-delete" name="confirm" value="yes" required>
      <label for="confirm-delete">I understand deliveries to this URL stop at once</label>
    </div>
    <button type="submit" class="button button-danger">Delete endpoint</button>
  </form>
</section>`,
  });
}
