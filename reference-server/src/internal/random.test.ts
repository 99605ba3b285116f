import { describe, expect, it } from 'vitest';
import {
  newId,
  newRequestId,
  newTimeOrderedId,
  randomAccountNumber,
  randomBase62,
  randomBytesFromPool,
  safeEqual,
  sha256,
} from './random.ts';

describe('random', () => {
  it('randomBase62 gives exactly the length asked, in base62', () => {
    for (const length of [0, 1, 16, 32, 100])
      expect(randomBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
  });

  it('randomBase62 is not biased towards the first characters (smoke)', () => {
    const counts = new Map<string, number>();
    const sample = randomBase62(62 * 2_000);
    for (const char of sample) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 2,000 each; a modulo bias on 256 would give the first 8 characters about 3% more.
    // The bounds are ~7 standard deviations wide, so this never fails by chance.
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(1_700);
      expect(count).toBeLessThan(2_300);
    }
    const first8 = '01234567'.split('').reduce((sum, char) => sum + (counts.get(char) ?? 0), 0) / 8;
    const last8 = 'stuvwxyz'.split('').reduce((sum, char) => sum + (counts.get(char) ?? 0), 0) / 8;
    expect(Math.abs(first8 - last8)).toBeLessThan(200);
  });

  it('newId is prefix_ + 24 base62 characters, never twice the same', () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => newId('ses')));
    expect(ids.size).toBe(1_000);
    for (const id of ids) expect(id).toMatch(/^ses_[0-9A-Za-z]{24}$/);
  });

  it('newTimeOrderedId is prefix_ + 24 base62, sorts by creation time, and is never twice the same', () => {
    const at = Date.parse('2030-01-01T00:00:00Z');
    const sameMs = Array.from({ length: 1_000 }, () => newTimeOrderedId('ses', at));
    expect(new Set(sameMs).size).toBe(1_000);
    for (const id of sameMs) expect(id).toMatch(/^ses_[0-9A-Za-z]{24}$/);
    // The 8 time digits are the same within a millisecond, and order the ids across milliseconds and years.
    expect(new Set(sameMs.map((id) => id.slice(4, 12))).size).toBe(1);
    const times = [0, 1, 61, 62, at - 1, at, at + 1, Date.parse('2100-01-01T00:00:00Z')];
    const ids = times.map((time) => newTimeOrderedId('ses', time));
    expect([...ids].sort()).toEqual(ids);
  });

  it('newRequestId is req_ + 16 base62 (the OpenAPI pattern), sorts by time, and is never twice the same', () => {
    const at = Date.parse('2030-01-01T00:00:00Z');
    const sameMs = Array.from({ length: 10_000 }, () => newRequestId(at));
    expect(new Set(sameMs).size).toBe(10_000);
    for (const id of sameMs) expect(id).toMatch(/^req_[0-9A-Za-z]{16}$/);
    const times = [0, 1, 61, 62, at - 1, at, at + 1, Date.parse('2100-01-01T00:00:00Z')];
    const ids = times.map((time) => newRequestId(time));
    expect([...ids].sort()).toEqual(ids);
    expect(newRequestId().slice(4, 12) >= newRequestId(Date.now() - 1).slice(4, 12)).toBe(true);
  });

  it('randomAccountNumber has 10 digits and no leading zero', () => {
    for (let i = 0; i < 1_000; i++) expect(randomAccountNumber()).toMatch(/^[1-9]\d{9}$/);
  });

  it('sha256 and safeEqual', () => {
    expect(sha256('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(safeEqual('sk_test_a', 'sk_test_a')).toBe(true);
    expect(safeEqual('sk_test_a', 'sk_test_b')).toBe(false);
    expect(safeEqual('short', 'longer value')).toBe(false);
  });

  it('randomBytesFromPool never hands the same bytes out twice, across pool refills', () => {
    // 12-byte nonces: 4096 is not a multiple of 12, so refills with a remainder left over happen here too.
    const nonces = Array.from({ length: 5_000 }, () => randomBytesFromPool(12));
    for (const nonce of nonces) expect(nonce.length).toBe(12);
    expect(new Set(nonces.map((nonce) => nonce.toString('hex'))).size).toBe(5_000);
    // Each is a copy: changing one leaves the next caller's bytes alone.
    const first = randomBytesFromPool(12);
    const second = randomBytesFromPool(12);
    const before = second.toString('hex');
    first.fill(0);
    expect(second.toString('hex')).toBe(before);
    expect(randomBytesFromPool(5_000).length).toBe(5_000);
  });
});
