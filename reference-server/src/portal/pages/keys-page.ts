import type { Environment, KeyKind, RolledKey } from '@servicepay/node/protocol';
import { type ApiKey, keyHint } from '../../db/api-keys.ts';
import { HttpError } from '../../errors.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import type { PortalServices } from '../../routes/portal-deps.ts';
import { actorOf } from '../caller.ts';
import { formatEpoch } from '../format.ts';
import { RollKeyFormSchema } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, page, sendPage, signInHref } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

/** The environment's active keys of each kind. */
async function keysOf(store: PortalServices['store'], context: PortalContext) {
  const of = (kind: KeyKind) => store.apiKeys.active(context.business.id, context.environment, kind);
  return { secret: await of('secret'), publishable: await of('publishable') };
}

/**
 * The API keys page (`GET /portal/keys`) and its Roll form (`POST /portal/keys/roll`), which rolls through
 * `PortalSessions.rollKey`: the session that rolled its own key moves to the new one.
 */
export const KEYS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/keys',
    operationId: 'portalKeys',
    tag: 'Portal',
    summary: 'API keys page',
    auth: 'portalSession',
    success: { 200: htmlPage('Keys by prefix and last four.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller, res }, { store }) =>
      sendPage(res, keysPage(caller, await keysOf(store, caller))),
  }),
  defineOperation({
    method: 'post',
    path: '/portal/keys/roll',
    operationId: 'portalRollKey',
    tag: 'Portal',
    summary: 'Roll a key (the old one stops at once; the new one shown once)',
    auth: 'portalSession',
    form: { schema: RollKeyFormSchema },
    success: { 200: htmlPage('The keys page with the new key.') },
    errors: [404, 409],
    handler: async ({ caller, body, res }, { store, logger, portalSessions }) => {
      const rolled = await portalSessions.rollKey(caller, body.kind, actorOf(caller));
      if (!rolled) throw new HttpError(404, 'not_found', 'No such business.');
      logger.info('portal key rolled', {
        businessId: caller.business.id,
        environment: caller.environment,
        kind: body.kind,
      });
      // The new key is in this answer only (Cache-Control: no-store): never in a URL, a cookie or the database.
      sendPage(res, keysPage(caller, await keysOf(store, caller), rolled));
    },
  }),
] as const;

const KIND_TEXT: Record<KeyKind, { label: string; use: string }> = {
  secret: { label: 'Secret key', use: 'Server-to-server calls. Never in frontend code.' },
  publishable: { label: 'Publishable key', use: 'Reads your public checkout profile. Safe in HTML.' },
};

function keyRow(context: PortalContext, environment: Environment, kind: KeyKind, keys: ApiKey[]): SafeHtml {
  const text = KIND_TEXT[kind];
  const id = `roll-${environment}-${kind}`;
  return html`<tr>
  <th scope="row">${text.label}<span class="cell-help">${text.use}</span></th>
  <td data-label="Key">${keys.length === 0 ? html`<span class="muted">none</span>` : keys.map((key) => html`<code class="key">${keyHint(key)}</code> `)}</td>
  <td data-label="Created">${keys.length === 0 ? '' : formatEpoch(keys[0]?.createdAt ?? null)}</td>
  <td data-label="Roll">
    <form method="post" action="/portal/keys/roll" class="inline-form">
      ${csrfField(context)}
      <input type="hidden" name="environment" value="${environment}">
      <input type="hidden" name="kind" value="${kind}">
      <div class="check">
        <input type="checkbox" id="${id}" name="confirm" value="yes" required>
        <label for="${id}">I understand the current ${kind} key stops working at once</label>
      </div>
      <button type="submit" class="button button-danger">Roll ${kind} key</button>
    </form>
  </td>
</tr>`;
}

/**
 * API Keys: the session's environment's keys by prefix and last four, and rolling each (the old key stops at
 * once; the new one is shown this once). The other environment's keys take a sign-in with its secret key.
 *
 * @example
 * res.send(keysPage(context, { secret: [...], publishable: [...] }).value);
 */
export function keysPage(
  context: PortalContext,
  keys: Record<KeyKind, ApiKey[]>,
  rolled?: RolledKey,
): SafeHtml {
  const environment = context.environment;
  const other = environment === 'test' ? 'live' : 'test';
  const notice = rolled
    ? {
        tone: 'good' as const,
        text: html`<p><strong>New ${rolled.kind} key for ${rolled.environment}.</strong> Copy it now: it is shown this once.
        ${rolled.revokedKeyHint ? html`The old key (<code>${rolled.revokedKeyHint}</code>) no longer works.` : ''}</p>
        <p class="secret-line"><code id="new-key" class="secret">${rolled.key}</code>
        <button type="button" class="button button-quiet" data-copy="new-key" hidden>Copy</button></p>`,
      }
    : undefined;
  return page({
    title: 'API keys',
    context,
    section: 'keys',
    path: '/portal/keys',
    ...(notice ? { notice } : {}),
    body: html`<h1>API keys <span class="env-chip">${environment}</span></h1>
<p class="lead">Each environment has its own pair. Keys are stored only as hashes: after creation the portal shows
a key's prefix and last four characters. Rolling issues a new key and <strong>revokes the old one immediately</strong>:
update your servers first, or their calls fail with <code>401 api_key_revoked</code>.</p>
<div class="table-wrap" role="region" aria-labelledby="keys-caption" tabindex="0">
<table class="stack">
  <caption id="keys-caption">${environment === 'test' ? 'Test' : 'Live'} keys</caption>
  <thead><tr><th scope="col">Kind</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Roll</th></tr></thead>
  <tbody>
    ${keyRow(context, environment, 'secret', keys.secret)}
    ${keyRow(context, environment, 'publishable', keys.publishable)}
  </tbody>
</table>
</div>
<p class="muted">This portal session was opened with a ${environment} key, so it shows and rolls ${environment} keys only.
<a href="${signInHref(other, '/portal/keys')}">Sign in with your ${other} secret key</a> to see the ${other} pair.</p>`,
  });
}
