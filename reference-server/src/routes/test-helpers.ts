import { SimulateTransferParamsSchema } from '@servicepay/node/protocol';
import { type Response, Router } from 'express';
import type { SimulatedBank } from '../bank/simulated-bank.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, requireApiKey } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import { idempotent } from '../middleware/idempotency.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { TestEndings } from '../sessions/test-endings.ts';
import { TestTransfers } from '../sessions/test-transfers.ts';
import { sendData } from './envelope.ts';

/** Simulated money moves only with a test key: a live key answers 403 `test_mode_only`. */
function refuseLive(res: Response): void {
  if (apiCaller(res).environment !== 'test') {
    throw new HttpError(
      403,
      'test_mode_only',
      'Test helpers need a test key (sk_test_...). Live money moves at a real bank.',
    );
  }
}

/**
 * A merchant's automated tests pay their own test sessions with the secret test key, without the widget:
 * `POST /api/test/sessions/{id}/account` opens the session's checkout (its virtual account) as the widget's
 * bootstrap would, and `POST /api/test/transfers` has the simulated bank pay an account. They reach the other
 * endings at once too: `POST /api/test/sessions/{id}/expire` ends the session's lifetime now (`expired`), and
 * `POST /api/test/sessions/{id}/account/expire` its account's countdown (back to `pending`, `account_expired`).
 */
export function testHelperRoutes(
  auth: AuthDeps,
  store: Store,
  bank: SimulatedBank,
  sessions: SessionService,
  endings: TestEndings,
): Router {
  const router = Router();
  const transfers = new TestTransfers(store, bank);

  router.post('/api/test/sessions/:id/account', requireApiKey(auth), idempotent, async (req, res) => {
    refuseLive(res);
    const opened = await sessions.openForTest(apiCaller(res), String(req.params.id));
    sendData(res, opened);
  });

  router.post('/api/test/sessions/:id/expire', requireApiKey(auth), idempotent, async (req, res) => {
    refuseLive(res);
    sendData(res, await endings.expire(apiCaller(res), String(req.params.id), 'session'));
  });

  router.post('/api/test/sessions/:id/account/expire', requireApiKey(auth), idempotent, async (req, res) => {
    refuseLive(res);
    sendData(res, await endings.expire(apiCaller(res), String(req.params.id), 'account'));
  });

  router.post('/api/test/transfers', requireApiKey(auth), idempotent, async (req, res) => {
    const caller = apiCaller(res);
    refuseLive(res);
    const parsed = SimulateTransferParamsSchema.safeParse(req.body);
    if (!parsed.success) throw validationError(parsed.error, 'transfer');
    // The caller's own test session's account only (the portal's Test bank pays through the same service).
    const { accountNumber, amount, payerAccount } = parsed.data;
    sendData(res, await transfers.pay(caller, accountNumber, amount, payerAccount));
  });

  return router;
}
