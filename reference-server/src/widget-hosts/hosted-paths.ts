/**
 * The payer-facing pages a widget host serves beside the widget (issue 36), and their addresses:
 *
 * - `/checkout/<session id>#<client secret>`: the hosted checkout of one session. The client secret rides in
 *   the fragment, which a browser never sends to a server, so no log, proxy or `Referer` keeps it; the page's
 *   script reads it and drops it from the address bar before opening the checkout.
 * - `/checkout/<session id>/return`: where the checkout goes when it closes; the service looks at the
 *   session and sends the payer to its `successUrl` or `cancelUrl`, or answers a page saying what happened.
 * - `/links/<payment link id>`: a payment link's page (its form posts to the same address).
 */

const SESSION_ID = /^ses_[0-9A-Za-z]{1,60}$/;
const LINK_ID = /^pl_[0-9A-Za-z]{1,60}$/;

/** A hosted page's address, parsed: which page and which session or link it names. */
export type HostedPath =
  | { page: 'checkout'; sessionId: string }
  | { page: 'checkout-return'; sessionId: string }
  | { page: 'link'; linkId: string };

/**
 * The hosted page `path` names, or undefined when it names none (the widget's own files are served then).
 *
 * @example
 * hostedPath('/links/pl_abc'); // { page: 'link', linkId: 'pl_abc' }
 */
export function hostedPath(path: string): HostedPath | undefined {
  const parts = path.split('/');
  if (parts[0] !== '') return undefined;
  const [, first, id, rest, extra] = parts;
  if (extra !== undefined || id === undefined) return undefined;
  if (first === 'checkout' && SESSION_ID.test(id)) {
    if (rest === undefined) return { page: 'checkout', sessionId: id };
    if (rest === 'return') return { page: 'checkout-return', sessionId: id };
    return undefined;
  }
  if (first === 'links' && LINK_ID.test(id) && rest === undefined) return { page: 'link', linkId: id };
  return undefined;
}

/**
 * The hosted checkout's `url` for a session: on `hostUrl` (the widget host of its environment), the secret in
 * the fragment only.
 *
 * @example
 * hostedCheckoutUrl('https://js.test.example', 'ses_1', 'cs_test_…'); // 'https://js.test.example/checkout/ses_1#cs_test_…'
 */
export function hostedCheckoutUrl(hostUrl: string, sessionId: string, clientSecret: string): string {
  return `${hostUrl}/checkout/${sessionId}#${clientSecret}`;
}

/**
 * A payment link's `url`, on the widget host of its environment.
 *
 * @example
 * paymentLinkUrl('https://js.test.example', 'pl_1'); // 'https://js.test.example/links/pl_1'
 */
export function paymentLinkUrl(hostUrl: string, linkId: string): string {
  return `${hostUrl}/links/${linkId}`;
}
