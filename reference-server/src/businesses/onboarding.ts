import type { CreatedBusiness, Environment, KeyKind, RolledKey } from '@servicepay/node/protocol';
import { keyHint } from '../db/api-keys.ts';
import type { Repositories } from '../db/repositories.ts';
import type { Store } from '../db/store.ts';
import { newId, randomBase62, sha256 } from '../internal/random.ts';

const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];

/** A new key: `sk_test_` + 32 base62 characters. Only its hash, prefix and last four are stored. */
async function issueKey(
  tx: Repositories,
  businessId: string,
  environment: Environment,
  kind: KeyKind,
  now: number,
): Promise<string> {
  const prefix = `${kind === 'secret' ? 'sk' : 'pk'}_${environment}_`;
  const key = `${prefix}${randomBase62(32)}`;
  await tx.apiKeys.insert({
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
): Promise<CreatedBusiness> {
  return store.writes.run(async (tx) => {
    const id = newId('biz');
    await tx.businesses.insert({ id, name, kycApproved, createdAt: now });
    const keys: Partial<Record<Environment, { secretKey: string; publishableKey: string }>> = {};
    for (const environment of ENVIRONMENTS) {
      keys[environment] = {
        secretKey: await issueKey(tx, id, environment, 'secret', now),
        publishableKey: await issueKey(tx, id, environment, 'publishable', now),
      };
    }
    const { test, live } = keys;
    if (!test || !live) throw new Error('unreachable: two environments');
    return { business: { id, name }, keys: { test, live } };
  });
}

/**
 * Issues a new key and revokes the old one at once (spec §5.6), and records who did it in the audit log (key
 * hints only, never a key). Undefined when the business does not exist.
 *
 * @example
 * const rolled = await rollKey(store, 'biz_…', 'test', 'secret', Date.now(), 'cli:ops');
 */
export function rollKey(
  store: Store,
  businessId: string,
  environment: Environment,
  kind: KeyKind,
  now: number,
  actor = 'service',
): Promise<RolledKey | undefined> {
  return store.writes.run((tx) => rollKeyIn(tx, businessId, environment, kind, now, actor));
}

/** `rollKey` inside a write job the caller runs (the portal rebinds its session in the same one). */
export async function rollKeyIn(
  tx: Repositories,
  businessId: string,
  environment: Environment,
  kind: KeyKind,
  now: number,
  actor = 'service',
): Promise<RolledKey | undefined> {
  {
    if (!(await tx.businesses.find(businessId))) return undefined;
    const old = await tx.apiKeys.active(businessId, environment, kind);
    for (const key of old) await tx.apiKeys.revoke(key.id, now);
    const key = await issueKey(tx, businessId, environment, kind, now);
    const hint = old.map(keyHint).join(', ');
    await tx.auditLog.record({
      at: now,
      actor,
      action: 'api_key.rolled',
      businessId,
      environment,
      target: `${key.slice(0, key.lastIndexOf('_') + 1)}…${key.slice(-4)}`,
      details: { kind, revoked: hint },
    });
    return { environment, kind, key, revokedKeyHint: hint };
  }
}

/**
 * Approves a business's KYC (its live keys work from now on) and records who did it. False when the business
 * does not exist.
 *
 * @example
 * await approveKyc(store, 'biz_…', Date.now(), 'cli:ops'); // true
 */
export function approveKyc(
  store: Store,
  businessId: string,
  now: number,
  actor = 'service',
): Promise<boolean> {
  return store.writes.run(async (tx) => {
    if (!(await tx.businesses.approveKyc(businessId))) return false;
    await tx.auditLog.record({
      at: now,
      actor,
      action: 'kyc.approved',
      businessId,
      environment: 'live',
      target: businessId,
      details: {},
    });
    return true;
  });
}
