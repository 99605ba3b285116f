import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a link page's form may be sent after it was shown. */
export const FORM_LIFETIME_MS = 2 * 60 * 60 * 1000;

/** The cookie that carries the browser's half of the form token (`HttpOnly`, `SameSite=Strict`). */
export const FORM_COOKIE = 'sp_link_form';

/**
 * The link page's CSRF defence, a signed double submit: the page sets a random nonce in a `SameSite=Strict`
 * cookie and puts `<issued>.<HMAC(key, nonce, link, issued)>` in the form; a post counts only when both
 * arrive and agree, for this link, within two hours. Another site can make a browser post the form, but it
 * can neither read the token nor (with `SameSite=Strict`) have the cookie sent along. The key is derived from
 * the service's secrets key, so every instance checks every other's forms.
 *
 * @example
 * const tokens = new LinkFormTokens(key);
 * const { nonce, token } = tokens.issue('pl_1', Date.now()); // nonce → cookie, token → hidden field
 * tokens.check('pl_1', nonce, token, Date.now()); // true
 */
export class LinkFormTokens {
  constructor(private readonly key: Buffer) {}

  issue(linkId: string, now: number, nonce = randomBytes(18).toString('base64url')) {
    return { nonce, token: `${now}.${this.sign(nonce, linkId, now)}` };
  }

  check(linkId: string, nonce: string | undefined, token: string | undefined, now: number): boolean {
    if (!nonce || !token || nonce.length > 64) return false;
    const match = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return false;
    const issued = Number(match[1]);
    if (issued > now + 60_000 || now - issued > FORM_LIFETIME_MS) return false;
    const expected = Buffer.from(this.sign(nonce, linkId, issued));
    const given = Buffer.from(match[2] as string);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  private sign(nonce: string, linkId: string, issued: number): string {
    return createHmac('sha256', this.key).update(`${nonce}\n${linkId}\n${issued}`).digest('base64url');
  }
}

/** The value of one cookie of a request's `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}
