import { describe, expect, it } from 'vitest';
import { parseConnectMessage, parseFrameMessage, parseHelloMessage, parseHostMessage } from './messages.ts';

describe('the postMessage protocol accepts exactly its messages', () => {
  it('parses each frame message and nothing else', () => {
    const payment = { id: 'ses_1', reference: 'ref_1', status: 'successful' };
    expect(parseFrameMessage({ type: 'success', payment })).toEqual({ type: 'success', payment });
    // Extra fields are dropped, not passed on to the merchant's onSuccess.
    expect(parseFrameMessage({ type: 'success', payment: { ...payment, amount: 1 }, extra: true })).toEqual({
      type: 'success',
      payment,
    });
    expect(parseFrameMessage({ type: 'error', message: 'no' })).toEqual({ type: 'error', message: 'no' });
    for (const type of ['ready', 'cancelled', 'close'] as const)
      expect(parseFrameMessage({ type })).toEqual({ type });
    for (const bad of [
      null,
      'success',
      [],
      { type: 'success' },
      { type: 'success', payment: { id: 1, reference: 'r', status: 's' } },
      { type: 'error', message: 'x'.repeat(2001) },
      { type: 'start', clientSecret: 'cs_test_x' },
      { type: 'teardown' },
    ]) {
      expect(parseFrameMessage(bad)).toBeUndefined();
    }
  });

  it('parses host messages, hello and connect by shape', () => {
    expect(parseHostMessage({ type: 'start', clientSecret: 'cs_test_abc' })).toEqual({
      type: 'start',
      clientSecret: 'cs_test_abc',
    });
    expect(parseHostMessage({ type: 'close-requested', x: 1 })).toEqual({ type: 'close-requested' });
    expect(parseHostMessage({ type: 'start' })).toBeUndefined();
    expect(parseHostMessage({ type: 'success' })).toBeUndefined();
    expect(parseHelloMessage({ kind: 'servicepay:hello', nonce: 'abc' })).toEqual({
      kind: 'servicepay:hello',
      nonce: 'abc',
    });
    expect(parseHelloMessage({ kind: 'servicepay:hello' })).toBeUndefined();
    expect(parseConnectMessage({ kind: 'servicepay:connect', protocol: 1, nonce: 'n' })).toEqual({
      kind: 'servicepay:connect',
      protocol: 1,
      nonce: 'n',
    });
    expect(parseConnectMessage({ kind: 'servicepay:connect', protocol: 2, nonce: 'n' })).toBeUndefined();
  });
});
