import {
  CreateWebhookEndpointParamsSchema,
  ListWebhookDeliveriesParamsSchema,
  ListWebhookEndpointsParamsSchema,
  ResendEventParamsSchema,
  UpdateWebhookEndpointParamsSchema,
} from '@servicepay/node/protocol';
import { Router } from 'express';
import type { Webhooks } from '../events/webhooks.ts';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { apiCaller, requireApiKey } from '../middleware/authenticate.ts';
import { validationError } from '../middleware/error-handler.ts';
import { idempotent } from '../middleware/idempotency.ts';
import { sendData, sendPage } from './envelope.ts';

/**
 * Webhook endpoints as a resource (`/api/webhooks`), their deliveries, and resending an event. Secret key only,
 * scoped to the key's business and environment.
 *
 * @example
 * app.use(webhookEndpointRoutes(auth, webhooks)); // as createApp mounts it
 */
export function webhookEndpointRoutes(auth: AuthDeps, webhooks: Webhooks): Router {
  const router = Router();
  const secretKey = requireApiKey(auth);

  router.post('/api/webhooks', secretKey, idempotent, async (req, res) => {
    const parsed = CreateWebhookEndpointParamsSchema.safeParse(req.body ?? {});
    if (!parsed.success) throw validationError(parsed.error, 'webhook endpoint');
    const endpoint = await webhooks.create(apiCaller(res), parsed.data);
    sendData(res, endpoint, 201);
  });

  router.get('/api/webhooks', secretKey, async (req, res) => {
    const parsed = ListWebhookEndpointsParamsSchema.safeParse(req.query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    sendPage(res, await webhooks.list(apiCaller(res), parsed.data));
  });

  router.get('/api/webhooks/:id', secretKey, async (req, res) => {
    sendData(res, await webhooks.retrieve(apiCaller(res), String(req.params.id)));
  });

  router.patch('/api/webhooks/:id', secretKey, async (req, res) => {
    const parsed = UpdateWebhookEndpointParamsSchema.safeParse(req.body ?? {});
    if (!parsed.success) throw validationError(parsed.error, 'webhook endpoint');
    const endpoint = await webhooks.update(apiCaller(res), String(req.params.id), parsed.data);
    sendData(res, endpoint);
  });

  router.delete('/api/webhooks/:id', secretKey, async (req, res) => {
    const deleted = await webhooks.remove(apiCaller(res), String(req.params.id));
    sendData(res, deleted);
  });

  router.post('/api/webhooks/:id/roll-secret', secretKey, idempotent, async (req, res) => {
    const endpoint = await webhooks.rollSecret(apiCaller(res), String(req.params.id));
    sendData(res, endpoint);
  });

  router.get('/api/webhooks/:id/deliveries', secretKey, async (req, res) => {
    const parsed = ListWebhookDeliveriesParamsSchema.safeParse(req.query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    sendPage(res, await webhooks.listDeliveries(apiCaller(res), String(req.params.id), parsed.data));
  });

  router.post('/api/events/:id/resend', secretKey, idempotent, async (req, res) => {
    const parsed = ResendEventParamsSchema.safeParse(req.body ?? {});
    if (!parsed.success) throw validationError(parsed.error, 'resend request');
    const result = await webhooks.resend(apiCaller(res), String(req.params.id), parsed.data.endpointId);
    sendData(res, result, 202);
  });

  return router;
}
