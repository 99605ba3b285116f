import type { Environment } from '@servicepay/node/protocol';
import { randomBase62, sha256, timeOrderedPrefix } from '../internal/random.ts';

/**
 * Client secrets (`cs_test_…`, `cs_live_…`) and the key a session is found by from one.
 *
 * A secret made now is `cs_<env>_` + 8 base62 digits of its creation time + 32 random base62 (190 bits). It is
 * stored only as its lookup key: those 8 time digits (ASCII), then the SHA-256 of the whole secret. The digits
 * tell nothing the session's own `createdAt` does not, and they make the keys sort by time, so a new session's
 * key lands on the last page of the `client_secret_hash` index instead of a random page of it. With a random
 * key, every create dirtied a page of its own in that index, and at a million sessions the checkpoints carried
 * those pages all over the file: 12 % fewer creates per second in an A/B at 1M sessions (issue 12).
 *
 * A secret made before (`cs_<env>_` + 32 random base62) is stored as its bare SHA-256 and still opens its
 * checkout: the two forms differ in length (40 and 32 bytes), so neither can be taken for the other.
 */

const CURRENT = /^cs_(?:test|live)_([0-9A-Za-z]{8})[0-9A-Za-z]{32}$/;
const BEFORE_TIME_ORDERED = /^cs_(?:test|live)_[0-9A-Za-z]{32}$/;

/** The stored form of a secret in the current form: its time digits (ASCII), then its SHA-256. */
const timeOrderedKey = (time: string, clientSecret: string): Buffer =>
  Buffer.concat([Buffer.from(time, 'latin1'), sha256(clientSecret)]);

export interface NewClientSecret {
  /** Shown once, in the create's answer. */
  clientSecret: string;
  /** What the session stores (`client_secret_hash`). */
  lookupKey: Buffer;
}

/**
 * @example
 * const { clientSecret, lookupKey } = newClientSecret('test', Date.now()); // 'cs_test_0QzXbT5a…'
 */
export function newClientSecret(environment: Environment, at: number): NewClientSecret {
  const time = timeOrderedPrefix(at);
  const clientSecret = `cs_${environment}_${time}${randomBase62(32)}`;
  return { clientSecret, lookupKey: timeOrderedKey(time, clientSecret) };
}

/**
 * The stored key of a client secret, or `undefined` when the string is not a client secret in either form.
 *
 * @example
 * const key = clientSecretLookupKey(body.clientSecret); // then sessions.findByClientSecretHash(key)
 */
export function clientSecretLookupKey(clientSecret: string): Buffer | undefined {
  const current = CURRENT.exec(clientSecret);
  if (current) return timeOrderedKey(current[1] as string, clientSecret);
  return BEFORE_TIME_ORDERED.test(clientSecret) ? sha256(clientSecret) : undefined;
}
