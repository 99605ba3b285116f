import type { Request } from 'express';
import { HttpError } from '../errors.ts';

/** Query parameter names that would put a credential in a URL (logs, Referer, browser history). */
export const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set([
  'token',
  'access_token',
  'widget_token',
  'authorization',
  'auth',
  'key',
]);

/** A widget token, API key or client secret anywhere in a value (`wt_…`, `Bearer wt_…`, `sk_test_…`). */
const CREDENTIAL_VALUE = /(^|[^0-9A-Za-z])(wt_|(sk|pk|cs)_(test|live)_)[0-9A-Za-z]{8,}/;

/**
 * Whether the query carries a credential. The app's 'simple' query parser turns a repeated parameter into an
 * array (`?x=wt_…&x=wt_…`), so every value of every parameter is looked at, not only strings.
 */
function carriesCredential(query: Record<string, unknown>): boolean {
  for (const [name, value] of Object.entries(query)) {
    if (CREDENTIAL_PARAMS.has(name.toLowerCase())) return true;
    if (CREDENTIAL_VALUE.test(name)) return true;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    for (const item of values) {
      const text = String(item);
      if (text.startsWith('wt_') || CREDENTIAL_VALUE.test(text)) return true;
    }
  }
  return false;
}

/**
 * The one check of every widget-token route, made before anything else (the budget, the token): a URL whose
 * query names a credential parameter (`token`, `access_token`, …) or holds a token-looking value (`wt_…`,
 * `sk_test_…`, `cs_live_…`, anywhere in any value or name) is refused with 400 `bad_request`, even beside a
 * good `Authorization` header. *Why:* a URL is written to access logs, proxies' logs, `Referer` headers and
 * browser history; a widget token there outlives the checkout. Refusing it (rather than ignoring it) tells the
 * integrator at once.
 *
 * @example
 * refuseCredentialInUrl(req); // throws on /api/widget/sessions/ses_1/cancel?wt=wt_…
 */
export function refuseCredentialInUrl(req: Request): void {
  if (carriesCredential(req.query as Record<string, unknown>)) {
    throw new HttpError(
      400,
      'bad_request',
      'Send the widget token in the Authorization header (Bearer wt_...), never in the URL.',
    );
  }
}
