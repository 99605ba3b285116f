import { describe, expect, it } from 'vitest';
import { checkInitOptions } from './init-options.ts';

const onSuccess = () => undefined;
const onError = () => undefined;
const secret = 'cs_test_0123456789abcdefghijABCDEFGHIJ01';

describe('ServicePay.init options', () => {
  it('accepts the four options and lists the others to be ignored', () => {
    const checked = checkInitOptions({
      clientSecret: secret,
      onSuccess,
      onError,
      amount: 1,
      currency: 'USD',
    });
    expect(checked).toEqual({
      ok: true,
      options: { clientSecret: secret, onSuccess, onError },
      ignored: ['amount', 'currency'],
    });
  });

  it('reports each mistake, through onError when there is one', () => {
    expect(checkInitOptions(undefined)).toMatchObject({ ok: false, onError: undefined });
    expect(checkInitOptions({ clientSecret: secret, onSuccess })).toMatchObject({
      ok: false,
      message: expect.stringContaining('onError'),
      onError: undefined,
    });
    for (const clientSecret of [
      undefined,
      '',
      'sk_test_abcdefghijkl',
      'cs_prod_abcdefghijkl',
      'cs_test_short',
      42,
    ]) {
      expect(checkInitOptions({ clientSecret, onSuccess, onError })).toMatchObject({
        ok: false,
        message: expect.stringContaining('clientSecret'),
        onError,
      });
    }
    expect(checkInitOptions({ clientSecret: secret, onError })).toMatchObject({
      ok: false,
      message: expect.stringContaining('onSuccess'),
    });
    expect(checkInitOptions({ clientSecret: secret, onSuccess, onError, onCancel: 'no' })).toMatchObject({
      ok: false,
      message: expect.stringContaining('onCancel'),
    });
  });
});
