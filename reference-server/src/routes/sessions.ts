import { CreateSessionParamsSchema, ListSessionsParamsSchema } from '@servicepay/node/protocol';
import { Router } from 'express';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, requireApiKey, requireApiKeyOrWidgetToken } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import { afterWrite, idempotent, idempotentWrite, rememberInWrite } from '../middleware/idempotency.ts';
import type { SessionService } from '../sessions/session-service.ts';
import { dataEnvelopeText, sendData, sendJsonText, sendPage } from './envelope.ts';

/** The merchant's API for payment sessions: create, list, retrieve, cancel. */
export function sessionRoutes(auth: AuthDeps, sessions: SessionService): Router {
  const router = Router();
  const secretKey = requireApiKey(auth);

  // The busiest write of the API (issue 12): its Idempotency-Key is remembered in the session's own write job,
  // so one commit makes the session and its remembered answer, and the very text remembered is what is sent.
  // A retry of a create is answered from the key only when the create fails (`afterWrite`).
  router.post('/api/widget/sessions', secretKey, idempotentWrite, (req, res) =>
    afterWrite(res, async () => {
      const parsed = CreateSessionParamsSchema.safeParse(req.body);
      if (!parsed.success) throw validationError(parsed.error, 'session');
      let answer = '';
      await sessions.create(apiCaller(res), parsed.data, async (tx, created) => {
        answer = dataEnvelopeText(created, 201);
        await rememberInWrite(tx, res, 201, answer);
      });
      sendJsonText(res, 201, answer);
    }),
  );

  router.get('/api/widget/sessions', secretKey, async (req, res) => {
    const parsed = ListSessionsParamsSchema.safeParse(req.query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    const page = await sessions.list(apiCaller(res), parsed.data);
    sendPage(res, page);
  });

  router.get('/api/widget/sessions/:id', secretKey, async (req, res) => {
    const session = await sessions.retrieve(apiCaller(res), String(req.params.id));
    sendData(res, session);
  });

  // The merchant (secret key) gets its Session; the payer's checkout (widget token) the PublicSession, so no
  // payer detail or metadata reaches the browser (the answer carries CORS for the widget hosts).
  router.post(
    '/api/widget/sessions/:id/cancel',
    requireApiKeyOrWidgetToken(auth),
    idempotent,
    async (req, res) => {
      const caller = res.locals.caller as ReturnType<typeof apiCaller> | { kind: 'widget' };
      const id = String(req.params.id);
      sendData(
        res,
        caller.kind === 'widget'
          ? await sessions.cancelByPayer(id)
          : await sessions.cancel(id, 'cancelled_by_merchant', caller),
      );
    },
  );

  return router;
}
