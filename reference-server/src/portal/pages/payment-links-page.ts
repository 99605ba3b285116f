import { type PaymentLink, type Session, wellFormedString } from '@servicepay/node/protocol';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import { asHttpError } from '../../middleware/domain-error-status.ts';
import { paymentLinkQrSvg } from '../../payment-links/payment-link-qr.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import type { PortalServices } from '../../routes/portal-deps.ts';
import { callerOf } from '../caller.ts';
import { badge, formatMoney, formatTime, statusBadge } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, page, sendPage } from '../layout.ts';
import type { PortalContext } from '../portal-auth.ts';

const csrf = z.string().min(1).max(200);

/** The Create form: the amount in major units as people type it (`5000` or `5,000.50`). */
export const CreatePaymentLinkFormSchema = z.object({
  _csrf: csrf,
  name: wellFormedString().max(200),
  amount: z.string().max(30),
  currency: z.string().max(3).default('NGN'),
  reusable: z.literal('yes').optional(),
  successUrl: z.string().max(2048).optional(),
});

/** Deactivate or activate one link. */
export const PaymentLinkActiveFormSchema = z.object({ _csrf: csrf, active: z.enum(['true', 'false']) });

/** `5,000.50` → 500050 minor units (2 digits); undefined for anything else. */
const minorUnits = (typed: string): number | undefined => {
  const match = /^\s*(\d{1,3}(?:,?\d{3})*|\d+)(?:\.(\d{1,2}))?\s*$/.exec(typed);
  if (!match) return undefined;
  return Number((match[1] as string).replaceAll(',', '')) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
};

const listView = async (deps: Pick<PortalServices, 'paymentLinks'>, context: PortalContext) =>
  (await deps.paymentLinks.list(callerOf(context), { limit: 100 })).data;

/**
 * The Payment links page (`GET /portal/payment-links`: the environment's links and a Create form), one link's
 * page (`GET /portal/payment-links/{id}`: its url to copy, its QR code, the payments made through it) and its
 * Deactivate/Activate form. Every change goes through `PaymentLinkService`, as `POST`/`PATCH
 * /api/payment-links` (the same checks and audit entries).
 */
export const PAYMENT_LINKS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/payment-links',
    operationId: 'portalPaymentLinks',
    tag: 'Portal',
    summary: 'Payment links page',
    auth: 'portalSession',
    success: { 200: htmlPage('The payment links.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, res }, deps) =>
      sendPage(res, paymentLinksPage(context, await listView(deps, context))),
  }),
  defineOperation({
    method: 'post',
    path: '/portal/payment-links',
    operationId: 'portalCreatePaymentLink',
    tag: 'Portal',
    summary: 'Create a payment link',
    auth: 'portalSession',
    form: { schema: CreatePaymentLinkFormSchema },
    success: { 303: seeOther("The new link's page.") },
    errors: [404, 409],
    handler: async ({ caller: context, body, res }, deps) => {
      const again = async (error: string) =>
        sendPage(res, paymentLinksPage(context, await listView(deps, context), { error, form: body }), 400);
      const amount = minorUnits(body.amount);
      if (body.name.trim() === '') return again('Give the link a name: the payer reads it.');
      if (amount === undefined || amount <= 0) return again('Enter the amount, such as 5000 or 5,000.50.');
      try {
        const link = await deps.paymentLinks.create(callerOf(context), {
          name: body.name,
          amount,
          currency: body.currency.toUpperCase(),
          reusable: body.reusable === 'yes',
          ...(body.successUrl ? { successUrl: body.successUrl } : {}),
        });
        res.redirect(303, `/portal/payment-links/${link.id}?created=1`);
      } catch (error) {
        const refusal = asHttpError(error);
        if (refusal instanceof HttpError && refusal.status === 400) {
          const fields = refusal.fieldErrors?.map((field) => `${field.path} ${field.message}`).join('; ');
          return again(fields ? `${refusal.message} (${fields})` : refusal.message);
        }
        throw error;
      }
    },
  }),
  defineOperation({
    method: 'get',
    path: '/portal/payment-links/{id}',
    operationId: 'portalPaymentLink',
    tag: 'Portal',
    summary: "One payment link's page: its url, QR code and payments",
    auth: 'portalSession',
    success: { 200: htmlPage('The link.'), 303: seeOther('Not signed in.') },
    errors: [404],
    handler: async ({ caller: context, params, req, res }, deps) => {
      const caller = callerOf(context);
      const link = await deps.paymentLinks.retrieve(caller, params.id);
      const payments = await deps.sessions.list(caller, { limit: 50, paymentLinkId: link.id });
      const qr = await paymentLinkQrSvg(link.url);
      sendPage(
        res,
        paymentLinkPage(context, link, payments.data, qr, { created: req.query.created === '1' }),
      );
    },
  }),
  defineOperation({
    method: 'post',
    path: '/portal/payment-links/{id}',
    operationId: 'portalPaymentLinkActive',
    tag: 'Portal',
    summary: 'Deactivate or activate a payment link',
    auth: 'portalSession',
    form: { schema: PaymentLinkActiveFormSchema },
    success: { 303: seeOther("The link's page.") },
    errors: [404, 409],
    handler: async ({ caller: context, params, body, res }, deps) => {
      await deps.paymentLinks.update(callerOf(context), params.id, { active: body.active === 'true' });
      res.redirect(303, `/portal/payment-links/${params.id}`);
    },
  }),
] as const;

const stateBadge = (link: PaymentLink): SafeHtml =>
  link.active
    ? badge('Active', 'good')
    : badge(link.completedAt ? 'Closed: paid once' : 'Deactivated', 'neutral');

/**
 * Payment links: the environment's links, newest first, and a form to create one.
 *
 * @example
 * res.send(paymentLinksPage(context, links).value);
 */
export function paymentLinksPage(
  context: PortalContext,
  links: PaymentLink[],
  options: { error?: string; form?: Partial<z.infer<typeof CreatePaymentLinkFormSchema>> } = {},
): SafeHtml {
  const rows = links.map(
    (link) => html`<tr>
  <th scope="row" class="break"><a href="/portal/payment-links/${link.id}">${link.name}</a></th>
  <td data-label="Amount">${formatMoney(link.amount, link.currency)}</td>
  <td data-label="Kind">${link.reusable ? 'Reusable' : 'One payment'}</td>
  <td data-label="State">${stateBadge(link)}</td>
  <td data-label="Created">${formatTime(link.createdAt)}</td>
</tr>`,
  );
  const form = options.form ?? {};
  return page({
    title: 'Payment links',
    context,
    section: 'payment-links',
    path: '/portal/payment-links',
    ...(options.error ? { notice: { tone: 'bad' as const, text: options.error } } : {}),
    body: html`<h1>Payment links <span class="env-chip">${context.environment}</span></h1>
<p class="lead">A link (or its QR code) is a page where a payer types a name and an email and pays you by bank transfer: no website needed.</p>
${
  links.length === 0
    ? html`<p class="empty">No payment links in ${context.environment} yet.</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="links-caption" tabindex="0"><table class="stack">
  <caption id="links-caption">Payment links</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Amount</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<section class="card" aria-labelledby="create-link">
  <h2 id="create-link">Create a payment link</h2>
  <form method="post" action="/portal/payment-links" class="form">
    ${csrfField(context)}
    <div class="field">
      <label for="link-name">Name (the payer reads it)</label>
      <input id="link-name" name="name" type="text" required maxlength="120" value="${form.name ?? ''}">
    </div>
    <div class="field">
      <label for="link-amount">Amount (NGN)</label>
      <input id="link-amount" name="amount" type="text" inputmode="decimal" required value="${form.amount ?? ''}" aria-describedby="link-amount-help">
      <p class="help" id="link-amount-help">In naira, such as 5000 or 5,000.50.</p>
      <input type="hidden" name="currency" value="NGN">
    </div>
    <div class="field">
      <label for="link-success">After paying, send the payer to <span class="muted">(optional)</span></label>
      <input id="link-success" name="successUrl" type="url" value="${form.successUrl ?? ''}" aria-describedby="link-success-help">
      <p class="help" id="link-success-help"><code>{SESSION_ID}</code> is replaced by the payment's id. Without one, a page of ours thanks the payer.</p>
    </div>
    <div class="field field-check">
      <input id="link-reusable" name="reusable" type="checkbox" value="yes" ${form.reusable === 'yes' || !options.form ? 'checked' : ''}>
      <label for="link-reusable">Reusable (untick for one payment only, such as an invoice)</label>
    </div>
    <button type="submit" class="button button-primary">Create link</button>
  </form>
</section>`,
  });
}

/**
 * One link: its url with a copy button, its QR code (an image of the same SVG the API serves), Deactivate or
 * Activate, and the payments made through it.
 *
 * @example
 * res.send(paymentLinkPage(context, link, sessions, svg).value);
 */
export function paymentLinkPage(
  context: PortalContext,
  link: PaymentLink,
  payments: Session[],
  qrSvg: string,
  options: { created?: boolean } = {},
): SafeHtml {
  const rows = payments.map(
    (session) => html`<tr>
  <th scope="row"><a href="/portal/sessions/${session.id}">${session.reference}</a></th>
  <td data-label="Payer">${session.payer.name}<span class="cell-help">${session.payer.email}</span></td>
  <td data-label="Status">${statusBadge(session.status)}</td>
  <td data-label="Created">${formatTime(session.createdAt)}</td>
</tr>`,
  );
  const qr = `data:image/svg+xml;base64,${Buffer.from(qrSvg).toString('base64')}`;
  return page({
    title: link.name,
    context,
    section: 'payment-links',
    path: `/portal/payment-links/${link.id}`,
    ...(options.created
      ? { notice: { tone: 'good' as const, text: 'Link created. Share its address or its QR code.' } }
      : {}),
    body: html`<p><a href="/portal/payment-links">← Payment links</a></p>
<h1>${link.name} <span class="env-chip">${context.environment}</span></h1>
<p>${formatMoney(link.amount, link.currency)} · ${link.reusable ? 'Reusable' : 'One payment'} · ${stateBadge(link)}</p>
<section class="card" aria-labelledby="share">
  <h2 id="share">Share it</h2>
  <p class="secret-line"><code id="link-url" class="break">${link.url}</code>
  <button type="button" class="button button-quiet" data-copy="link-url" hidden>Copy</button></p>
  <p><img id="link-qr" src="${qr}" width="220" height="220" alt="QR code of ${link.url}"></p>
  <form method="post" action="/portal/payment-links/${link.id}">
    ${csrfField(context)}
    <input type="hidden" name="active" value="${link.active ? 'false' : 'true'}">
    ${
      link.active
        ? html`<button type="submit" class="button">Deactivate</button>`
        : link.completedAt
          ? ''
          : html`<button type="submit" class="button">Activate</button>`
    }
  </form>
</section>
<section aria-labelledby="payments">
  <h2 id="payments">Payments through this link</h2>
  ${
    payments.length === 0
      ? html`<p class="empty">No payments yet.</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="payments" tabindex="0"><table class="stack">
  <thead><tr><th scope="col">Reference</th><th scope="col">Payer</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
  }
</section>`,
  });
}
