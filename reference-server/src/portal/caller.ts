import type { ApiCaller } from '../businesses/ownership.ts';
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
