import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CreatedSession, type FieldError, type Payer, PayerSchema } from '@servicepay/node/protocol';
import { IdempotencyKeyTakenError } from '../db/idempotency-keys.ts';
import type { PaymentLinkRecord } from '../db/payment-links.ts';
import { DomainError } from '../domain-errors.ts';
import { hostedCheckoutUrl } from '../widget-hosts/hosted-paths.ts';
import type { HostedPagesDeps } from './hosted-pages-deps.ts';
import { cookieValue, FORM_COOKIE } from './link-form-token.ts';
import { escapeHtml, type HostedPage, messagePage, redirect, sendPage } from './page-html.ts';
import { payerAmount } from './payer-amount.ts';

/** A form post is a few fields: anything larger is not this page's form. */
const MAX_FORM_BYTES = 8 * 1024;

type Values = { name: string; email: string; phone: string };

const FIELD_LABELS: Record<keyof Values, { label: string; type: string; autocomplete: string }> = {
  name: { label: 'Full name', type: 'text', autocomplete: 'name' },
  email: { label: 'Email address', type: 'email', autocomplete: 'email' },
  phone: { label: 'Phone number (optional)', type: 'tel', autocomplete: 'tel' },
};

/**
 * The link's form, with the values typed so far and each field's error beside it; the amount in the language of
 * the browser's `acceptLanguage`, as the checkout after it writes it.
 */
function formPage(
  link: PaymentLinkRecord,
  merchantName: string,
  token: string,
  values: Values,
  errors: Partial<Record<keyof Values, string>>,
  status: number,
  acceptLanguage: string | undefined,
): HostedPage {
  const amount = payerAmount(link.amount, link.currency, acceptLanguage);
  const fields = (Object.keys(FIELD_LABELS) as (keyof Values)[])
    .map((field) => {
      const { label, type, autocomplete } = FIELD_LABELS[field];
      const error = errors[field];
      const described = error ? ` aria-invalid="true" aria-describedby="${field}-error"` : '';
      const required = field === 'phone' ? '' : ' required';
      const max = field === 'email' ? 254 : field === 'phone' ? 20 : 200;
      return `<div class="field">
<label for="${field}">${escapeHtml(label)}</label>
<input id="${field}" name="${field}" type="${type}" autocomplete="${autocomplete}" maxlength="${max}" value="${escapeHtml(values[field])}"${required}${described}>
${error ? `<p class="error" id="${field}-error">${escapeHtml(error)}</p>` : ''}
</div>`;
    })
    .join('\n');
  const count = Object.keys(errors).length;
  const summary =
    count > 0
      ? `<p class="error-summary" role="alert">Please check ${count === 1 ? 'the field' : `the ${count} fields`} marked below.</p>\n`
      : '';
  return {
    status,
    title: `Pay ${merchantName}`,
    testMode: link.environment === 'test',
    body: `<h1>${escapeHtml(link.name)}</h1>
<p class="merchant">Pay <strong>${escapeHtml(merchantName)}</strong></p>
<p class="amount" id="amount">${escapeHtml(amount)}</p>
${summary}<form id="payer-form" method="post" action="/links/${escapeHtml(link.id)}" novalidate>
<input type="hidden" name="form_token" value="${escapeHtml(token)}">
${fields}
<button type="submit" id="continue">Continue to payment</button>
</form>
<p class="hint">You pay by bank transfer to an account shown on the next page.</p>`,
  };
}

/** The field errors of the payer's details, by field (the first message of each). */
function fieldErrors(issues: FieldError[]): Partial<Record<keyof Values, string>> {
  const errors: Partial<Record<keyof Values, string>> = {};
  const messages: Record<keyof Values, string> = {
    name: 'Enter your full name.',
    email: 'Enter an email address like name@example.com.',
    phone: 'Enter a phone number of digits, optionally starting with +.',
  };
  for (const issue of issues) {
    const field = issue.path as keyof Values;
    if (field in messages && !errors[field]) errors[field] = messages[field];
  }
  return errors;
}

/** Reads a url-encoded form of at most `MAX_FORM_BYTES`; undefined when it is larger or not a form. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Whether the post comes from this host's own page: a browser says where a request comes from
 * (`Sec-Fetch-Site`, else `Origin`); when sent, it must name this host. The signed form token is checked too.
 */
function sameOrigin(req: IncomingMessage, origin: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  // Under `Referrer-Policy: no-referrer` a browser sends `Origin: null` for its own form: the token decides then.
  const from = req.headers.origin;
  return from === undefined || from === 'null' || from === origin;
}

/**
 * `GET` and `POST /links/<id>`: the link's page. GET shows the form (or 404, or 410 for a link that no longer
 * takes payments); POST checks the form token, the payer's details (400 with the errors beside the fields),
 * the budgets (429), then makes the session on the merchant's behalf and sends the payer to its hosted
 * checkout.
 */
export async function linkPage(
  req: IncomingMessage,
  res: ServerResponse,
  deps: HostedPagesDeps,
  page: { environment: 'test' | 'live'; origin: string; version: string; linkId: string; address: string },
): Promise<void> {
  const link = await deps.paymentLinks.find(page.linkId);
  const send = (answer: HostedPage) => sendPage(req, res, page.version, answer);
  if (!link || link.environment !== page.environment) {
    return send(messagePage(404, 'Payment link not found', 'Check the address you were given.', false));
  }
  const testMode = link.environment === 'test';
  const closed = () =>
    send(
      messagePage(
        410,
        'This payment link is closed',
        link.completedAt !== null
          ? 'It was for one payment only, and that payment was made. Ask the seller for a new link.'
          : 'The seller no longer takes payments through it. Ask the seller for a new link.',
        testMode,
      ),
    );
  if (!link.active) return closed();
  const merchantName = (await deps.store.businesses.find(link.businessId))?.name ?? '';
  const now = deps.clock.now();
  const secure = page.origin.startsWith('https:');
  const fresh = (values: Values, errors: Partial<Record<keyof Values, string>>, status: number) => {
    const { nonce, token } = deps.formTokens.issue(link.id, now);
    res.setHeader(
      'Set-Cookie',
      `${FORM_COOKIE}=${nonce}; Path=/links/${link.id}; HttpOnly; SameSite=Strict; Max-Age=7200${secure ? '; Secure' : ''}`,
    );
    send(formPage(link, merchantName, token, values, errors, status, req.headers['accept-language']));
  };
  if (req.method !== 'POST') return fresh({ name: '', email: '', phone: '' }, {}, 200);

  const form = await readForm(req);
  if (!form) {
    return send(messagePage(415, 'Could not read the form', 'Go back and send the form again.', testMode));
  }
  const values: Values = {
    name: form.get('name') ?? '',
    email: (form.get('email') ?? '').trim(),
    phone: (form.get('phone') ?? '').trim(),
  };
  const nonce = cookieValue(req.headers.cookie, FORM_COOKIE);
  if (
    !sameOrigin(req, page.origin) ||
    !deps.formTokens.check(link.id, nonce, form.get('form_token') ?? undefined, now)
  ) {
    // Not this page's form (another site's, or one shown too long ago): nothing is made, a fresh form is shown.
    res.setHeader('X-Refused', 'form_token');
    return fresh(values, {}, 403);
  }
  const parsed = PayerSchema.safeParse({
    name: values.name,
    email: values.email,
    ...(values.phone === '' ? {} : { phone: values.phone }),
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: issue.path.join('.'),
      message: issue.message,
    }));
    return fresh(values, fieldErrors(issues), 400);
  }
  // The same form sent again with the same details (a double click, a browser re-posting it) is the same
  // submission: it gets the checkout the first was answered with, and makes nothing.
  const submission = { linkId: link.id, formToken: form.get('form_token') ?? '', details: parsed.data };
  const earlier = await deps.submissions.earlier(submission, now);
  if (earlier !== undefined) return redirect(res, earlier);
  // The link's budget and the address's: each counts only a form that would make a session.
  for (const [limiter, key] of [
    [deps.limiters.perLink, link.id],
    [deps.limiters.perAddress, page.address],
  ] as const) {
    const decision = await limiter.hit(key, now);
    if (!decision.allowed) {
      return send({
        ...messagePage(
          429,
          'Too many payments started',
          `Too many payments were started here just now. Try again in ${Math.ceil(decision.resetSeconds / 60)} minute(s).`,
          testMode,
        ),
        headers: { 'Retry-After': String(decision.resetSeconds) },
      });
    }
  }
  try {
    const checkoutOf = (session: CreatedSession) => hostedCheckoutUrl('', session.id, session.clientSecret);
    const session = await deps.paymentLinks.openSession(link.id, parsed.data as Payer, (created) =>
      deps.submissions.claimFor(submission, checkoutOf(created), now),
    );
    return redirect(res, checkoutOf(session));
  } catch (error) {
    // Another request of this submission made its session first (this one's was rolled back): its answer.
    if (error instanceof IdempotencyKeyTakenError) {
      const first = await deps.submissions.earlier(submission, now);
      if (first !== undefined) return redirect(res, first);
    }
    if (error instanceof DomainError && error.reason === 'payment_link_inactive') return closed();
    if (error instanceof DomainError) {
      return send(messagePage(409, 'This payment cannot start', error.message, testMode));
    }
    throw error;
  }
}
