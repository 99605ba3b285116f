import type { Environment } from '@servicepay/node/protocol';
import type { Business } from '../db/businesses.ts';
import { DomainError } from '../domain-errors.ts';

/**
 * Who is calling with an API key: the business and environment a key belongs to, and its kind. Built by the
 * authentication middleware; the services take it to scope what they read and write, without knowing HTTP.
 *
 * @example
 * import type { ApiCaller } from './ownership.ts';
 * const scope = (caller: ApiCaller) => `${caller.business.id}:${caller.environment}`;
 */
export interface ApiCaller {
  kind: 'secret' | 'publishable';
  business: Business;
  environment: Environment;
  /** Who the audit log names for what this caller changes; absent for an API key (`secret_key:<environment>`). */
  actor?: string;
}

/**
 * Spec §5.8: a resource of another business answers 403 `forbidden`; one of the caller's own business in the
 * other environment answers 403 `environment_mismatch` (a test key never reaches live money, nor the reverse).
 *
 * @example
 * import { assertOwnedBy } from './ownership.ts';
 * assertOwnedBy(caller, session, 'session'); // throws DomainError forbidden (or environment_mismatch) unless the caller's business and environment
 */
export function assertOwnedBy(
  caller: ApiCaller,
  resource: { businessId: string; environment: Environment },
  noun: string,
): void {
  if (resource.businessId !== caller.business.id) {
    throw new DomainError('forbidden', `This ${noun} belongs to another business.`);
  }
  if (resource.environment !== caller.environment) {
    throw new DomainError(
      'environment_mismatch',
      `This ${noun} lives in ${resource.environment}; use a ${resource.environment} key.`,
    );
  }
}
