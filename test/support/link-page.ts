/**
 * A payer's browser at a payment link's page, over plain HTTP (issue 36): it opens the page (the form, its
 * token and the form cookie) and posts the form back as a browser would, same-origin.
 */

/** What the page answered, with what a browser would keep: the cookie and the form's token. */
export interface LinkPageVisit {
  status: number;
  html: string;
  headers: Headers;
  /** `sp_link_form=<nonce>`, as the browser sends it back. */
  cookie: string | undefined;
  /** The hidden `form_token` field's value. */
  token: string | undefined;
}

/** Opens `url` (a link's page) as a browser does. */
export async function openLinkPage(url: string): Promise<LinkPageVisit> {
  const response = await fetch(url, { redirect: 'manual' });
  const html = await response.text();
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  const token = /name="form_token" value="([^"]+)"/.exec(html)?.[1];
  return { status: response.status, html, headers: response.headers, cookie, token };
}

/** Posts the link's form; `overrides` replace what a browser would send (to forge or to leave parts out). */
export async function submitLinkForm(
  url: string,
  visit: Pick<LinkPageVisit, 'cookie' | 'token'>,
  fields: Record<string, string>,
  overrides: {
    origin?: string | null;
    secFetchSite?: string;
    cookie?: string | null;
    token?: string | null;
  } = {},
) {
  const origin = new URL(url).origin;
  const body = new URLSearchParams(fields);
  const token = overrides.token === undefined ? visit.token : overrides.token;
  if (token !== null && token !== undefined) body.set('form_token', token);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const cookie = overrides.cookie === undefined ? visit.cookie : overrides.cookie;
  if (cookie) headers.cookie = cookie;
  const sentOrigin = overrides.origin === undefined ? origin : overrides.origin;
  if (sentOrigin !== null) headers.origin = sentOrigin;
  if (overrides.secFetchSite) headers['sec-fetch-site'] = overrides.secFetchSite;
  const response = await fetch(url, { method: 'POST', body, headers, redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** The session id and client secret of the hosted checkout a successful form post sends the payer to. */
export function checkoutLocation(location: string | null): { sessionId: string; clientSecret: string } {
  const match = /^\/checkout\/(ses_[0-9A-Za-z]+)#(cs_(?:test|live)_[0-9A-Za-z]+)$/.exec(location ?? '');
  if (!match) throw new Error(`not a hosted checkout address: ${location}`);
  return { sessionId: match[1] as string, clientSecret: match[2] as string };
}
