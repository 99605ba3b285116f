import { CreateSessionParamsSchema, ListSessionsParamsSchema } from '@servicepay/node/protocol';
import { Router } from 'express';
import { HttpError } from '../errors.ts';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, requireApiKey, requireApiKeyOrWidgetToken } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import type { SessionService } from '../sessions/session-service.ts';

const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The merchant's API for payment sessions: create, list, retrieve, cancel. */
export function sessionRoutes(auth: AuthDeps, sessions: SessionService): Router {
  const router = Router();
  const secretKey = requireApiKey(auth);

  router.post('/api/widget/sessions', secretKey, async (req, res) => {
    const idempotencyKey = req.get('Idempotency-Key');
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      throw new HttpError(
        400,
        'validation_failed',
        'Idempotency-Key must be 1 to 255 printable ASCII characters.',
        [{ path: 'Idempotency-Key', message: 'invalid header' }],
      );
    }
    const parsed = CreateSessionParamsSchema.safeParse(req.body);
    if (!parsed.success) throw validationError(parsed.error, 'session');
    const result = await sessions.create(apiCaller(res), parsed.data, idempotencyKey);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(result.statusCode).json(result.body);
  });

  router.get('/api/widget/sessions', secretKey, (req, res) => {
    const parsed = ListSessionsParamsSchema.safeParse(req.query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    const page = sessions.list(apiCaller(res), parsed.data);
    res.json({ meta: { statusCode: 200, message: 'OK' }, ...page });
  });

  router.get('/api/widget/sessions/:id', secretKey, (req, res) => {
    const session = sessions.retrieve(apiCaller(res), String(req.params.id));
    res.json({ meta: { statusCode: 200, message: 'OK' }, data: session });
  });

  router.post('/api/widget/sessions/:id/cancel', requireApiKeyOrWidgetToken(auth), async (req, res) => {
    const caller = res.locals.caller as ReturnType<typeof apiCaller> | { kind: 'widget' };
    const owner = caller.kind === 'widget' ? undefined : caller;
    const reason = owner ? 'cancelled_by_merchant' : 'cancelled_by_payer';
    const session = await sessions.cancel(String(req.params.id), reason, owner);
    res.json({ meta: { statusCode: 200, message: 'OK' }, data: session });
  });

  return router;
}
