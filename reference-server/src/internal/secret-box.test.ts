import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.ts';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, and never seals the same text under the same nonce twice', () => {
    const sealed = Array.from({ length: 2_000 }, () => box.seal('{"clientSecret":"cs_test_x"}'));
    for (const one of sealed) expect(box.open(one)).toBe('{"clientSecret":"cs_test_x"}');
    // The nonce (second part) is fresh for every seal, pool refills included (docs: random.ts).
    expect(new Set(sealed.map((one) => one.split('.')[1])).size).toBe(2_000);
    expect(new Set(sealed).size).toBe(2_000);
  });

  it('refuses a sealed text that was altered, or sealed with another key', () => {
    const sealed = box.seal('webhook signing secret');
    const [version, iv, tag, body] = sealed.split('.');
    const flipped = Buffer.from(body ?? '', 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(() => box.open([version, iv, tag, flipped.toString('base64')].join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});
