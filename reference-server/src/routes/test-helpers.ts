import { SimulateTransferParamsSchema } from '@servicepay/node/protocol';
import { Router } from 'express';
import type { SimulatedBank } from '../bank/simulated-bank.ts';
import type { Store } from '../db/store.ts';
import { HttpError, notFound } from '../errors.ts';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, assertOwnedBy, requireApiKey } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import { idempotent } from '../middleware/idempotency.ts';
import { transferAtBank } from './bank.ts';

/** `POST /api/test/transfers`: a merchant's automated tests pay their own test sessions (secret test key). */
export function testHelperRoutes(auth: AuthDeps, store: Store, bank: SimulatedBank): Router {
  const router = Router();

  router.post('/api/test/transfers', requireApiKey(auth), idempotent, async (req, res) => {
    const caller = apiCaller(res);
    if (caller.environment !== 'test') {
      throw new HttpError(
        403,
        'test_mode_only',
        'Simulated transfers need a test key (sk_test_...). Live money moves at a real bank.',
      );
    }
    const parsed = SimulateTransferParamsSchema.safeParse(req.body);
    if (!parsed.success) throw validationError(parsed.error, 'transfer');
    const account = store.virtualAccounts.find(parsed.data.accountNumber);
    const session = account && store.sessions.find(account.sessionId);
    if (!session) throw notFound('account');
    // The environment matters as much as the business: a test key must never pay a live session.
    assertOwnedBy(caller, session, 'account');
    const transfer = await transferAtBank(bank, parsed.data.accountNumber, parsed.data.amount);
    res.json({ meta: { statusCode: 200, message: 'OK' }, data: transfer });
  });

  return router;
}
