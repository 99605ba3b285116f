import type { IncomingMessage } from 'node:http';
import type { ApiKeyWithOwner } from '../db/api-keys.ts';
import type { Store } from '../db/store.ts';

/**
 * A request's key as looked up: `found` (undefined: no such key), and `unconfirmedAt` when it came from memory
 * (`ApiKeyRepository.recall`, PostgreSQL) at that credentials version and no statement of this request has
 * confirmed it yet.
 */
export interface KeyLookup {
  token: string;
  found: ApiKeyWithOwner | undefined;
  unconfirmedAt?: number;
}

/**
 * The key the over-budget check (`over-budget.ts`) already looked up for a request, so authenticating it
 * (`authenticate.ts`) reads the key once.
 * Keyed by the request object, which is the same for `node:http` and express (express at most sets its prototype).
 */
export const earlyLookups = new WeakMap<IncomingMessage, KeyLookup>();

/**
 * The key from memory where the store remembers keys for confirmation (PostgreSQL: `recall`, no round trip),
 * else read as committed now (`findWithOwner`; on SQLite that confirms a remembered key by itself).
 *
 * @example
 * const lookup = await lookUpKey(store, token, sha256(token)); // { token, found, unconfirmedAt? }
 */
export async function lookUpKey(store: Store, token: string, hash: Buffer): Promise<KeyLookup> {
  const recalled = store.apiKeys.recall?.(hash);
  if (recalled) return { token, found: recalled.found, unconfirmedAt: recalled.credentialsVersion };
  return { token, found: await store.apiKeys.findWithOwner(hash) };
}

/**
 * The business budget a live secret key spends, or undefined for any other key (or none).
 *
 * @example
 * budgetOf(found); // 'biz_…:test'
 */
export function budgetOf(found: ApiKeyWithOwner | undefined): string | undefined {
  if (!found || found.key.revokedAt !== null || found.key.kind !== 'secret') return undefined;
  return `${found.business.id}:${found.key.environment}`;
}
