import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { defineOperation, json } from './operation.ts';

/**
 * `data` of `GET /health`.
 *
 * @example
 * HealthSchema.parse({ status: 'ok' });
 */
export const HealthSchema = z.object({ status: z.literal('ok') });

/** Runs an express handler as a step of an operation: resolves once it answered, rejects with what it passed on. */
function answerWith(handler: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (error?: unknown) => (error === undefined ? resolve() : reject(error));
    Promise.resolve(handler(req, res, next)).then(() => resolve(), reject);
  });
}

/**
 * The service's own: the load balancer's health check and this OpenAPI document. Neither reads a body nor
 * needs a credential, and both are mounted before the JSON body parser.
 *
 * @example
 * mountOperations(app, SERVICE_OPERATIONS, deps); // as createApp mounts every table
 */
export const SERVICE_OPERATIONS = [
  // 503 while the database does not answer or its disk is full: a load balancer takes the instance out until
  // it does.
  defineOperation({
    method: 'get',
    path: '/health',
    operationId: 'health',
    tag: 'Service',
    summary: 'Health check (for a load balancer)',
    description:
      'Answers 200 when the service can reach its database (one `SELECT 1` on PostgreSQL, at most 2 s; a check of the open handle on SQLite), else 503 `service_unavailable` with `Retry-After: 1`, and 200 again by itself once the database answers.',
    auth: 'none',
    success: { 200: json('The service is up and its database answers.', HealthSchema, 'Health') },
    errors: [503],
    handler: async ({ req, res }, { health }) => {
      await answerWith(health, req, res);
      return undefined;
    },
  }),
  defineOperation({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    tag: 'Service',
    summary: 'This OpenAPI 3.1 document',
    description:
      'Generated at start from the zod schemas of `@servicepay/node/protocol` with `z.toJSONSchema`.',
    auth: 'none',
    success: { 200: { kind: 'asset', description: 'The OpenAPI document (JSON).' } },
    errors: [],
    handler: (_context, { openApiDocument }) => ({ document: openApiDocument() }),
  }),
];
