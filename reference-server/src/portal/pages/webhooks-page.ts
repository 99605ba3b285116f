import {
  CreateWebhookEndpointParamsSchema,
  type WebhookEndpoint,
  WebhookEventTypeSchema,
} from '@servicepay/node/protocol';
import { HttpError } from '../../errors.ts';
import { asHttpError } from '../../middleware/domain-error-status.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import type { PortalServices } from '../../routes/portal-deps.ts';
import { callerOf } from '../caller.ts';
import { badge, formatSpan, formatTime } from '../format.ts';
import { CreateEndpointFormSchema, WebhooksQuerySchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

/** The Webhooks page with the environment's endpoints as they are now. */
const webhooksView = async (
  deps: Pick<PortalServices, 'webhooks' | 'webhookRetrySpanMs'>,
  context: PortalContext,
  options: Parameters<typeof webhooksPage>[3] = {},
) =>
  webhooksPage(
    context,
    (await deps.webhooks.list(callerOf(context), { limit: 100 })).data,
    deps.webhookRetrySpanMs,
    options,
  );

/**
 * The Webhooks page (`GET /portal/webhooks`: the environment's endpoints) and its Add form
 * (`POST /portal/webhooks`, through `Webhooks.create` as `POST /api/webhooks`: the same URL rules, the secret
 * shown this once). One endpoint's page and forms are `endpoint-page.ts`.
 */
export const WEBHOOKS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/webhooks',
    operationId: 'portalWebhooks',
    tag: 'Portal',
    summary: 'Webhook endpoints page',
    auth: 'portalSession',
    query: WebhooksQuerySchema,
    success: { 200: htmlPage('The endpoints.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, query, res }, deps) =>
      sendPage(res, await webhooksView(deps, context, { deleted: query.deleted === '1' })),
  }),
  defineOperation({
    method: 'post',
    path: '/portal/webhooks',
    operationId: 'portalCreateEndpoint',
    tag: 'Portal',
    summary: 'Add a webhook endpoint',
    auth: 'portalSession',
    form: { schema: CreateEndpointFormSchema },
    success: { 201: htmlPage('The endpoints with the new secret.') },
    errors: [404, 409],
    handler: async ({ caller: context, body, res }, deps) => {
      const params = CreateWebhookEndpointParamsSchema.safeParse({
        url: body.url,
        ...(body.description ? { description: body.description } : {}),
      });
      const again = async (message: string) =>
        sendPage(res, await webhooksView(deps, context, { error: message, url: body.url }), 400);
      if (!params.success) {
        // The contract's own words: the same rule as POST /api/webhooks.
        const problem = params.error.issues.find((issue) => issue.path[0] === 'url')?.message;
        return again(
          `${problem ? `The URL ${problem}. ` : ''}Enter a full http(s) URL, such as https://example.com/webhooks.`,
        );
      }
      try {
        const created = await deps.webhooks.create(callerOf(context), params.data);
        const { secret, ...endpoint } = created;
        sendPage(res, await webhooksView(deps, context, { created: { endpoint, secret } }), 201);
      } catch (error) {
        const refusal = asHttpError(error);
        if (refusal instanceof HttpError && refusal.status === 400) return again(refusal.message);
        throw error;
      }
    },
  }),
] as const;

/** `a`, `a and b`, `a, b and c`, each as code. */
export const codeList = (items: readonly string[]): SafeHtml =>
  html`${items.map(
    (item, index) =>
      html`${index === 0 ? '' : index === items.length - 1 ? ' and ' : ', '}<code>${item}</code>`,
  )}`;

/** An endpoint's state as a badge: enabled, disabled, or disabled because it kept failing. */
export const endpointState = (endpoint: WebhookEndpoint): SafeHtml =>
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
