import type { ApiCaller } from '../businesses/ownership.ts';
import { HttpError } from '../errors.ts';
import type { PortalContext } from './portal-auth.ts';

/**
 * Who the audit log names for a change made in the portal: the session's key, by id (never the key).
 *
 * @example
 * actorOf(context); // 'portal:key_…'
 */
export const actorOf = (context: PortalContext): string => `portal:${context.apiKeyId}`;

/**
 * The business's own view in the session's environment, as the API services expect a caller: a secret key of
 * that environment, audited as the portal session's key. There is no other environment to pass: the services
 * refuse (403 `environment_mismatch`) a session, endpoint or event of the other one.
 *
 * @example
 * await webhooks.list(callerOf(context), { limit: 100 });
 */
export const callerOf = (context: PortalContext): ApiCaller => ({
  kind: 'secret',
  business: context.business,
  environment: context.environment,
  actor: actorOf(context),
});

/**
 * Test mode's tools (the Test bank, "expire now") from a session signed in with a test key only: any other
 * answers the 403 `environment_mismatch` page with `refusal` (what the tool does, and to sign in with the test key).
 *
 * @example
 * assertTestMode(context, 'Only test sessions can be expired on demand.');
 */
export function assertTestMode(context: PortalContext, refusal: string): void {
  if (context.environment === 'test') return;
  throw new HttpError(
    403,
    'environment_mismatch',
    `${refusal} Sign in with your test secret key (sk_test_…) to use it.`,
  );
}
