import type { CreatedBusiness, Environment, KeyKind, RolledKey } from '@servicepay/node/protocol';
import type { Store } from '../db/store.ts';
import { newId, randomBase62, sha256 } from '../internal/random.ts';

const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];

/** A new key: `sk_test_` + 32 base62 characters. Only its hash, prefix and last four are stored. */
function issueKey(
  store: Store,
  businessId: string,
  environment: Environment,
  kind: KeyKind,
  now: number,
): string {
  const prefix = `${kind === 'secret' ? 'sk' : 'pk'}_${environment}_`;
  const key = `${prefix}${randomBase62(32)}`;
  store.apiKeys.insert({
    id: newId('key'),
    businessId,
    environment,
    kind,
    keyHash: sha256(key),
    prefix,
    last4: key.slice(-4),
    createdAt: now,
  });
  return key;
}

/** A business with both key pairs. The keys are returned this once; the database keeps only their hashes. */
export function createBusiness(
  store: Store,
  name: string,
  kycApproved: boolean,
  now: number,
): CreatedBusiness {
  return store.db.transaction(() => {
    const id = newId('biz');
    store.businesses.insert({ id, name, kycApproved, createdAt: now });
    const pair = (environment: Environment) => ({
      secretKey: issueKey(store, id, environment, 'secret', now),
      publishableKey: issueKey(store, id, environment, 'publishable', now),
    });
    const [test, live] = ENVIRONMENTS.map(pair);
    if (!test || !live) throw new Error('unreachable: two environments');
    return { business: { id, name }, keys: { test, live } };
  })();
}

/**
 * Issues a new key and revokes the old one at once (spec §5.6), and records who did it in the audit log (key
 * hints only, never a key). Undefined when the business does not exist.
 *
 * @example
 * const rolled = rollKey(store, 'biz_…', 'test', 'secret', Date.now(), 'cli:ops');
 */
export function rollKey(
  store: Store,
  businessId: string,
  environment: Environment,
  kind: KeyKind,
  now: number,
  actor = 'service',
): RolledKey | undefined {
  return store.db.transaction(() => {
    if (!store.businesses.find(businessId)) return undefined;
    const old = store.apiKeys.active(businessId, environment, kind);
    for (const key of old) store.apiKeys.revoke(key.id, now);
    const key = issueKey(store, businessId, environment, kind, now);
    const hint = old.map((revoked) => `${revoked.prefix}…${revoked.last4}`).join(', ');
    store.auditLog.record({
      at: now,
      actor,
      action: 'api_key.rolled',
      businessId,
      environment,
      target: `${key.slice(0, key.lastIndexOf('_') + 1)}…${key.slice(-4)}`,
      details: { kind, revoked: hint },
    });
    return { environment, kind, key, revokedKeyHint: hint };
  })();
}

/**
 * Approves a business's KYC (its live keys work from now on) and records who did it. False when the business
 * does not exist.
 *
 * @example
 * approveKyc(store, 'biz_…', Date.now(), 'cli:ops'); // true
 */
export function approveKyc(store: Store, businessId: string, now: number, actor = 'service'): boolean {
  return store.db.transaction(() => {
    if (!store.businesses.approveKyc(businessId)) return false;
    store.auditLog.record({
      at: now,
      actor,
      action: 'kyc.approved',
      businessId,
      environment: 'live',
      target: businessId,
      details: {},
    });
    return true;
  })();
}
