import type { Environment, FieldError } from '@servicepay/node/protocol';
import { DomainError } from '../domain-errors.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/** `127.0.0.0/8`, `[::1]` and `localhost`: a payer's own machine, where only a developer's shop listens. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Refuses a way back that the protocol's schema cannot judge alone: `http://` is taken only for a loopback
 * host and only in the test environment (a developer's shop on their own machine); everywhere else the payer
 * is sent over `https://` only, so nothing on the way can rewrite where the payer lands after paying.
 *
 * @example
 * checkRedirectUrls('live', { successUrl: 'http://127.0.0.1:3000/thanks' }); // throws validation_failed
 */
export function checkRedirectUrls(
  environment: Environment,
  urls: { successUrl?: string | undefined; cancelUrl?: string | undefined },
): void {
  const errors: FieldError[] = [];
  for (const path of ['successUrl', 'cancelUrl'] as const) {
    const value = urls[path];
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      // The schema's URL check and WHATWG's parser can disagree on odd input: the parser decides.
      errors.push({ path, message: 'must be an absolute https URL' });
      continue;
    }
    if (url.protocol === 'https:') continue;
    if (environment === 'live') {
      errors.push({ path, message: 'must be an https URL in the live environment' });
    } else if (!isLoopbackHost(url.hostname)) {
      errors.push({ path, message: 'must be an https URL (http only for 127.0.0.1, [::1] or localhost)' });
    }
  }
  if (errors.length > 0)
    throw new DomainError('validation_failed', 'The session has invalid fields.', errors);
}

/**
 * Where the payer goes: the merchant's URL with every `{SESSION_ID}` replaced by the session's id.
 *
 * @example
 * fillSessionId('https://shop.example/thanks?s={SESSION_ID}', 'ses_1'); // 'https://shop.example/thanks?s=ses_1'
 */
export function fillSessionId(url: string, sessionId: string): string {
  return url.replaceAll('{SESSION_ID}', encodeURIComponent(sessionId));
}
