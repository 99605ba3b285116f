import type { Request } from 'express';
import { describe, expect, test } from 'vitest';
import { addressKey } from './rate-limit.ts';

const from = (ip: string) => ({ ip, socket: { remoteAddress: ip } }) as unknown as Request;

describe('addressKey: what a per-address budget counts by', () => {
  test('an IPv4 client by its address', () => {
    expect(addressKey(from('203.0.113.7'))).toBe('203.0.113.7');
  });

  test('an IPv4-mapped client as the IPv4 address it is', () => {
    expect(addressKey(from('::ffff:203.0.113.7'))).toBe('203.0.113.7');
  });

  test('an IPv6 client by its /64, however it spells its address', () => {
    const key = addressKey(from('2001:db8:1:2::1'));
    expect(key).toBe('2001:db8:1:2::/64');
    expect(addressKey(from('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'))).toBe(key);
    expect(addressKey(from('2001:db8:1:3::1'))).not.toBe(key);
  });
});
