import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { badge, formatEpoch } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

/** The KYC page (`GET /portal/kyc`): read only. */
export const KYC_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/kyc',
    operationId: 'portalKyc',
    tag: 'Portal',
    summary: 'KYC status page',
    auth: 'portalSession',
    success: { 200: htmlPage('KYC status.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: ({ caller, res }) => sendPage(res, kycPage(caller)),
  }),
] as const;

/**
 * KYC: whether the business may take live payments, and what to do if not.
 *
 * @example
 * res.send(kycPage(context).value);
 */
export function kycPage(context: PortalContext): SafeHtml {
  const { business } = context;
  return page({
    title: 'KYC',
    context,
    section: 'kyc',
    path: '/portal/kyc',
    body: html`<h1>Know your customer</h1>
<dl class="facts">
  <div><dt>Business</dt><dd>${business.name}</dd></div>
  <div><dt>Business id</dt><dd><code>${business.id}</code></dd></div>
  <div><dt>KYC status</dt><dd>${business.kycApproved ? badge('Approved', 'good') : badge('Pending review', 'warn')}</dd></div>
  <div><dt>Registered</dt><dd>${formatEpoch(business.createdAt)}</dd></div>
</dl>
<section class="card" aria-labelledby="kyc-next">
  <h2 id="kyc-next">${business.kycApproved ? 'Live payments are on' : 'Before you take live payments'}</h2>
  ${
    business.kycApproved
      ? html`<p>Your live keys work: sessions created with <code>sk_live_…</code> move real money.</p>`
      : html`<p>Test keys work now. Live keys answer <code>403 kyc_required</code> until the review is approved. On this
  reference server an operator approves it with:</p>
  <pre><code>npx servicepay-server kyc approve --business ${business.id}</code></pre>`
  }
</section>`,
  });
}
