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

/** Issues a new key and revokes the old one at once (spec §5.6). Undefined when the business does not exist. */
export function rollKey(
  store: Store,
  businessId: string,
  environment: Environment,
  kind: KeyKind,
  now: number,
): RolledKey | undefined {
  return store.db.transaction(() => {
    if (!store.businesses.find(businessId)) return undefined;
    const old = store.apiKeys.active(businessId, environment, kind);
    for (const key of old) store.apiKeys.revoke(key.id, now);
    const key = issueKey(store, businessId, environment, kind, now);
    const hint = old.map((revoked) => `${revoked.prefix}…${revoked.last4}`).join(', ');
    return { environment, kind, key, revokedKeyHint: hint };
  })();
}
