import type { Pagination, WebhookDelivery, WebhookEndpoint } from '@servicepay/node/protocol';
import { MAX_ENDPOINTS_PER_ENVIRONMENT } from '../../events/webhooks.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { callerOf } from '../caller.ts';
import { badge, formatTime } from '../format.ts';
import {
  DeleteEndpointFormSchema,
  DeliveriesQuerySchema,
  EndpointStateFormSchema,
  ResendFormSchema,
  RevealSecretFormSchema,
} from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, type PageOptions, page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';
import { codeList, endpointState } from './webhooks-page.ts';

/**
 * One webhook endpoint's page (`GET /portal/webhooks/{id}`: its settings and deliveries) and its forms, each
 * through the `Webhooks` service the API uses: reveal the signing secret (`revealSecret`), enable or disable
 * (`update`, as `PATCH /api/webhooks/{id}`), delete (`remove`, as `DELETE`: pending deliveries fail, the audit
 * log records it), and resend an event to it (`resend`).
 */
export const ENDPOINT_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/webhooks/{id}',
    operationId: 'portalEndpoint',
    tag: 'Portal',
    summary: 'One endpoint with its deliveries and attempts',
    auth: 'portalSession',
    query: DeliveriesQuerySchema,
    success: { 200: htmlPage('The endpoint.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, params, query, res }, { webhooks }) => {
      const endpoint = await webhooks.retrieve(callerOf(context), params.id);
      const deliveries = await webhooks.listDeliveries(callerOf(context), params.id, {
        limit: 20,
        startingAfter: query.startingAfter,
      });
      sendPage(
        res,
        endpointPage(context, endpoint, deliveries, {
          ...(query.resent ? { resent: query.resent } : {}),
          ...(query.changed ? { changed: query.changed } : {}),
        }),
      );
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/webhooks/{id}/reveal',
    operationId: 'portalRevealSecret',
    tag: 'Portal',
    summary: "Reveal an endpoint's signing secret (after a confirm)",
    auth: 'portalSession',
    success: {
      200: htmlPage('The endpoint with its secret.'),
    },
    errors: [404, 409],
    form: { schema: RevealSecretFormSchema },
    handler: async ({ caller: context, params: { id }, res }, { webhooks, logger }) => {
      // The caller's own endpoint (404/403 otherwise).
      const secret = await webhooks.revealSecret(callerOf(context), id);
      const endpoint = await webhooks.retrieve(callerOf(context), id);
      logger.info('portal webhook secret revealed', { businessId: context.business.id, endpointId: id });
      const deliveries = await webhooks.listDeliveries(callerOf(context), id, { limit: 20 });
      sendPage(res, endpointPage(context, endpoint, deliveries, { secret }));
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/webhooks/{id}/state',
    operationId: 'portalEndpointState',
    tag: 'Portal',
    summary: 'Enable or disable an endpoint',
    auth: 'portalSession',
    success: { 303: seeOther('Back to the endpoint.') },
    errors: [404, 409],
    form: { schema: EndpointStateFormSchema },
    handler: async ({ caller: context, params: { id }, body, res }, { webhooks }) => {
      const enabled = body.enabled === 'true';
      await webhooks.update(callerOf(context), id, { enabled });
      res.redirect(
        303,
        `/portal/webhooks/${encodeURIComponent(id)}?changed=${enabled ? 'enabled' : 'disabled'}`,
      );
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/webhooks/{id}/delete',
    operationId: 'portalDeleteEndpoint',
    tag: 'Portal',
    summary: 'Delete an endpoint (after a confirm), as DELETE /api/webhooks/{id} does',
    auth: 'portalSession',
    success: {
      303: seeOther('To the Webhooks page, with a note that it was deleted.'),
    },
    errors: [404, 409],
    form: {
      schema: DeleteEndpointFormSchema,
      // Another business's endpoint answers 403 and an unknown one 404, before the form is looked at; then
      // the endpoint's page again, asking for the tick.
      invalid: async (_error, { caller: context, params: { id }, res }, { webhooks }) => {
        const endpoint = await webhooks.retrieve(callerOf(context), id);
        const deliveries = await webhooks.listDeliveries(callerOf(context), id, { limit: 20 });
        sendPage(
          res,
          endpointPage(context, endpoint, deliveries, {
            error: 'Tick the box to confirm, then delete the endpoint.',
          }),
          400,
        );
      },
    },
    handler: async ({ caller: context, params: { id }, res }, { webhooks, logger }) => {
      // What DELETE /api/webhooks/{id} does: pending deliveries fail, the audit log records it (another
      // business's endpoint answers 403, an unknown one 404).
      await webhooks.remove(callerOf(context), id);
      logger.info('portal webhook endpoint deleted', { businessId: context.business.id, endpointId: id });
      res.redirect(303, '/portal/webhooks?deleted=1');
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/webhooks/{id}/resend',
    operationId: 'portalResend',
    tag: 'Portal',
    summary: 'Resend an event to this endpoint',
    auth: 'portalSession',
    success: { 303: seeOther('Back to the endpoint.') },
    errors: [404, 409],
    form: { schema: ResendFormSchema },
    handler: async ({ caller: context, params: { id }, body, res }, { webhooks }) => {
      const result = await webhooks.resend(callerOf(context), body.eventId, id);
      const resent = result.deliveries[0];
      res.redirect(303, `/portal/webhooks/${encodeURIComponent(id)}${resent ? `?resent=${resent}` : ''}`);
    },
  }),
] as const;

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
