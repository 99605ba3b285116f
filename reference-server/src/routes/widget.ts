import {
  BootstrapParamsSchema,
  BootstrapResultSchema,
  type CheckoutProfile,
  CheckoutProfileSchema,
  NewAccountResultSchema,
} from '@servicepay/node/protocol';
import { defineOperation, emptyBody, json } from './operation.ts';

/**
 * What the checkout widget calls: the client-secret exchange, a new account, and the public profile. Each is
 * limited per client address (the checkout's budget), never against the merchant's secret-key budget.
 *
 * @example
 * mountOperations(app, WIDGET_OPERATIONS, deps); // as createApp mounts every table
 */
export const WIDGET_OPERATIONS = [
  defineOperation({
    method: 'post',
    path: '/api/widget/bootstrap',
    operationId: 'bootstrapCheckout',
    tag: 'Checkout',
    summary: "Exchange a client secret for a widget token and the session's account",
    auth: 'address',
    body: {
      schema: BootstrapParamsSchema,
      name: 'BootstrapParams',
      required: true,
      what: 'bootstrap request',
      absent: 'as-sent',
    },
    success: {
      200: json(
        'The widget token, the public session and its account.',
        BootstrapResultSchema,
        'BootstrapResult',
      ),
    },
    errors: [409, 410],
    handler: async ({ body }, { sessions }) => ({ data: await sessions.bootstrap(body.clientSecret) }),
  }),
  // The widget token's check spends the address's checkout budget itself (authenticate.ts).
  defineOperation({
    method: 'post',
    path: '/api/widget/sessions/{id}/accounts',
    operationId: 'newAccount',
    tag: 'Checkout',
    summary: 'A new virtual account after the previous one ran out',
    auth: 'widgetToken',
    body: emptyBody,
    idempotency: 'replay',
    success: { 201: json('The session and its new account.', NewAccountResultSchema, 'NewAccountResult') },
    errors: [403, 404, 409],
    handler: async ({ caller }, { sessions }) => ({
      status: 201,
      data: await sessions.newAccount(caller.session.id),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/widget/profile',
    operationId: 'checkoutProfile',
    tag: 'Checkout',
    summary: "The business's public checkout profile",
    auth: 'secretOrPublishableKey',
    success: {
      200: json(
        'The merchant name, the environment and the currencies the service takes.',
        CheckoutProfileSchema,
        'CheckoutProfile',
      ),
    },
    errors: [],
    handler: ({ caller }, { sessions }) => {
      const profile: CheckoutProfile = {
        merchantName: caller.business.name,
        environment: caller.environment,
        currencies: sessions.acceptedCurrencies(),
      };
      return { data: profile };
    },
  }),
];
