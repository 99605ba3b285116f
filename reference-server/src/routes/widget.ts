import { BootstrapParamsSchema, type CheckoutProfile } from '@servicepay/node/protocol';
import { type RequestHandler, Router } from 'express';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, requireApiKey, requireWidgetToken, widgetCaller } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import { idempotent } from '../middleware/idempotency.ts';
import type { SessionService } from '../sessions/session-service.ts';
import { sendData } from './envelope.ts';

/**
 * What the checkout widget calls: the client-secret exchange, a new account, and the public profile. Each is
 * limited per client address (the checkout's budget), never against the merchant's secret-key budget.
 */
export function widgetRoutes(
  auth: AuthDeps,
  sessions: SessionService,
  perAddressLimit: RequestHandler,
): Router {
  const router = Router();

  router.post('/api/widget/bootstrap', perAddressLimit, async (req, res) => {
    const parsed = BootstrapParamsSchema.safeParse(req.body);
    if (!parsed.success) throw validationError(parsed.error, 'bootstrap request');
    const result = await sessions.bootstrap(parsed.data.clientSecret);
    sendData(res, result);
  });

  // The widget token's check spends the address's checkout budget itself (authenticate.ts).
  router.post(
    '/api/widget/sessions/:id/accounts',
    requireWidgetToken(auth),
    idempotent,
    async (_req, res) => {
      const result = await sessions.newAccount(widgetCaller(res).session.id);
      sendData(res, result, 201);
    },
  );

  router.get('/api/widget/profile', requireApiKey(auth, { allowPublishable: true }), (_req, res) => {
    const caller = apiCaller(res);
    const profile: CheckoutProfile = {
      merchantName: caller.business.name,
      environment: caller.environment,
      currencies: sessions.acceptedCurrencies(),
    };
    sendData(res, profile);
  });

  return router;
}
