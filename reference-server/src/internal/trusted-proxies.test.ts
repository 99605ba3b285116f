import { describe, expect, it } from 'vitest';
import { trustedProxyMatcher } from './trusted-proxies.ts';

describe('trustedProxyMatcher', () => {
  it('matches the presets, ranges and addresses express trusts, IPv4-mapped IPv6 peers as IPv4', () => {
    const trusted = trustedProxyMatcher(['loopback', '10.0.0.0/8', '2001:db8::7', '::ffff:192.0.2.0/120']);
    for (const peer of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '10.200.0.1', '::ffff:10.0.0.1'])
      expect({ peer, trusted: trusted(peer) }).toEqual({ peer, trusted: true });
    for (const peer of ['2001:db8::7', '192.0.2.44', '::ffff:192.0.2.44'])
      expect({ peer, trusted: trusted(peer) }).toEqual({ peer, trusted: true });
    for (const peer of ['11.0.0.1', '2001:db8::8', '192.0.3.1', 'fe80::1', 'not an address'])
      expect({ peer, trusted: trusted(peer) }).toEqual({ peer, trusted: false });
  });

  it('trusts nobody when the list is empty (the default)', () => {
    expect(trustedProxyMatcher([])('127.0.0.1')).toBe(false);
  });

  it('knows linklocal and uniquelocal as express does', () => {
    const trusted = trustedProxyMatcher(['linklocal', 'uniquelocal']);
    for (const peer of ['169.254.1.1', 'fe80::1', '172.16.5.5', '192.168.1.1', 'fd00::1'])
      expect({ peer, trusted: trusted(peer) }).toEqual({ peer, trusted: true });
    expect(trusted('172.32.0.1')).toBe(false);
  });
});
