import { AuthenticationError, PermissionError } from '../errors.ts';
import type { Environment } from '../protocol/index.ts';

/**
 * Checks a secret key before any request, so a wrong kind of credential fails at construction with a message
 * that says what to use instead, and returns the environment the key routes to.
 */
export const environmentOfSecretKey = (key: unknown): Environment => {
  if (typeof key !== 'string' || key.trim() === '') {
    throw new AuthenticationError({
      code: 'authentication_required',
      message:
        'No secret key given. Pass your secret key (sk_test_… or sk_live_…), or set the SERVICEPAY_SECRET_KEY environment variable and call new ServicePay().',
    });
  }
  if (key.startsWith('pk_')) {
    throw new PermissionError({
      code: 'publishable_key_not_allowed',
      message:
        'A publishable key (pk_…) only initialises the widget in the browser. On your server use the secret key (sk_test_… or sk_live_…) of the same environment.',
    });
  }
  if (key.startsWith('cs_')) {
    throw new AuthenticationError({
      code: 'client_secret_not_a_credential',
      message:
        'A client secret (cs_…) belongs to one session and is for the widget (ServicePay.init({ clientSecret })). On your server use your secret key (sk_test_… or sk_live_…).',
    });
  }
  const match = /^sk_(test|live)_\S+$/.exec(key);
  if (match?.[1] !== 'test' && match?.[1] !== 'live') {
    throw new AuthenticationError({
      code: 'invalid_api_key',
      message: 'This is not a ServicePay secret key: secret keys start with sk_test_ or sk_live_.',
    });
  }
  return match[1];
};
