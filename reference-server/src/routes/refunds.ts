import { CreateRefundParamsSchema, ListRefundsParamsSchema } from '@servicepay/node/protocol';
import { Router } from 'express';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, requireApiKey } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import { idempotent } from '../middleware/idempotency.ts';
import type { RefundService } from '../refunds/refund-service.ts';
import { sendData, sendPage } from './envelope.ts';

/** The merchant's API for refunds (secret key): create and list a session's, list all, retrieve one. */
export function refundRoutes(auth: AuthDeps, refunds: RefundService): Router {
  const router = Router();
  const secretKey = requireApiKey(auth);

  // `idempotent`: a retry with the same key answers the first refund again, whatever became of it since.
  router.post('/api/widget/sessions/:id/refunds', secretKey, idempotent, async (req, res) => {
    const parsed = CreateRefundParamsSchema.safeParse(req.body ?? {});
    if (!parsed.success) throw validationError(parsed.error, 'refund');
    sendData(res, await refunds.create(apiCaller(res), String(req.params.id), parsed.data), 201);
  });

  router.get('/api/widget/sessions/:id/refunds', secretKey, async (req, res) => {
    const parsed = ListRefundsParamsSchema.safeParse(req.query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    sendPage(res, await refunds.list(apiCaller(res), { ...parsed.data, sessionId: String(req.params.id) }));
  });

  router.get('/api/refunds', secretKey, async (req, res) => {
    const parsed = ListRefundsParamsSchema.safeParse(req.query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    sendPage(res, await refunds.list(apiCaller(res), parsed.data));
  });

  router.get('/api/refunds/:id', secretKey, async (req, res) => {
    sendData(res, await refunds.retrieve(apiCaller(res), String(req.params.id)));
  });

  return router;
}
