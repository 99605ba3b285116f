import { describe, expect, it } from 'vitest';
import { randomBase62, sha256 } from '../internal/random.ts';
import { clientSecretLookupKey, newClientSecret } from './client-secret.ts';

describe('client secrets', () => {
  const at = Date.parse('2030-03-01T09:00:00Z');

  it('are cs_<env>_ + 8 time digits + 32 random base62, and never twice the same', () => {
    const made = Array.from({ length: 1_000 }, () => newClientSecret('live', at).clientSecret);
    expect(new Set(made).size).toBe(1_000);
    for (const secret of made) expect(secret).toMatch(/^cs_live_[0-9A-Za-z]{40}$/);
    expect(new Set(made.map((secret) => secret.slice(8, 16))).size).toBe(1);
    expect(newClientSecret('test', at).clientSecret).toMatch(/^cs_test_[0-9A-Za-z]{40}$/);
  });

  it('are stored as the time digits, then the SHA-256 of the whole secret, which the secret finds again', () => {
    const { clientSecret, lookupKey } = newClientSecret('test', at);
    expect(lookupKey.length).toBe(40);
    expect(lookupKey.subarray(0, 8).toString('latin1')).toBe(clientSecret.slice(8, 16));
    expect(lookupKey.subarray(8)).toEqual(sha256(clientSecret));
    expect(clientSecretLookupKey(clientSecret)).toEqual(lookupKey);
    // Nothing of the random part is stored in clear.
    expect(lookupKey.toString('latin1')).not.toContain(clientSecret.slice(16, 24));
  });

  it('have keys that sort by creation time, so a new one is appended to the index', () => {
    const times = [at - 86_400_000, at - 1, at, at + 1, at + 62, Date.parse('2100-01-01T00:00:00Z')];
    const keys = times.map((time) => newClientSecret('test', time).lookupKey);
    const sorted = [...keys].sort(Buffer.compare);
    expect(sorted).toEqual(keys);
  });

  it('made before they were time-ordered (cs_<env>_ + 32 base62) are found by their bare SHA-256', () => {
    const before = `cs_live_${randomBase62(32)}`;
    expect(clientSecretLookupKey(before)).toEqual(sha256(before));
    expect(clientSecretLookupKey(before)?.length).toBe(32);
  });

  it.each([
    ['too short', 'cs_test_abc'],
    ['between the two lengths', `cs_test_${'a'.repeat(36)}`],
    ['too long', `cs_test_${'a'.repeat(41)}`],
    ['the wrong environment', `cs_prod_${'a'.repeat(40)}`],
    ['not base62', `cs_test_${'a'.repeat(39)}-`],
    ['a secret key', `sk_test_${'a'.repeat(32)}`],
    ['a client secret with a trailing newline', `cs_test_${'a'.repeat(40)}\n`],
  ])('refuse a string that is %s', (_what, value) => {
    expect(clientSecretLookupKey(value)).toBeUndefined();
  });
});
