import { z } from 'zod';
import { defineOperation, json } from './operation.ts';

/**
 * `data` of `GET /health`.
 *
 * @example
 * HealthSchema.parse({ status: 'ok' });
 */
export const HealthSchema = z.object({ status: z.literal('ok') });
/** `data` of `GET /health/live`: the process answers (issue 28). */
export const LiveSchema = z.object({ status: z.literal('live') });
/** `data` of `GET /health/ready`: the database answers and a probe write commits (issue 28). */
export const ReadySchema = z.object({ status: z.literal('ready') });

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
      'Answers 200 when the service can reach its database (one `SELECT 1` on PostgreSQL, at most 2 s; a check of the open handle on SQLite), else 503 `service_unavailable` with `Retry-After: 1`, and 200 again by itself once the database answers. While the disk is full (no write can commit), 503 `service_unavailable` with `Retry-After: 30`.',
    auth: 'none',
    readsOwnBody: true,
    success: { 200: json('The service is up and its database answers.', HealthSchema, 'Health') },
    errors: [503],
    handler: async (_context, { health }) => {
      const refusal = await health.database();
      if (refusal) throw refusal;
      return { data: { status: 'ok' as const } };
    },
  }),
  // Liveness apart from readiness (issue 28): a supervisor restarts only a process that cannot answer; a
  // balancer sends traffic to an instance whose database answers and takes a write.
  defineOperation({
    method: 'get',
    path: '/health/live',
    operationId: 'healthLive',
    tag: 'Service',
    summary: 'Liveness (for a supervisor)',
    description:
      'Answers 200 whenever the process can answer; it never asks the database, so a database outage does not get instances restarted.',
    auth: 'none',
    readsOwnBody: true,
    success: { 200: json('The process answers.', LiveSchema, 'Live') },
    errors: [],
    readsDatabase: false,
    handler: () => ({ data: { status: 'live' as const } }),
  }),
  defineOperation({
    method: 'get',
    path: '/health/ready',
    operationId: 'healthReady',
    tag: 'Service',
    summary: 'Readiness (for a load balancer)',
    description:
      'Answers 200 when the database answers and one probe write commits within 2 s (probes share one write, reused for 1 s); else 503 `service_unavailable` with `Retry-After: 1` (while the disk is full, the same code with `Retry-After: 30`).',
    auth: 'none',
    readsOwnBody: true,
    success: { 200: json('The instance can take traffic.', ReadySchema, 'Ready') },
    errors: [503],
    handler: async (_context, { health }) => {
      const refusal = await health.ready();
      if (refusal) throw refusal;
      return { data: { status: 'ready' as const } };
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
    readsOwnBody: true,
    success: { 200: { kind: 'asset', description: 'The OpenAPI document (JSON).' } },
    errors: [],
    readsDatabase: false,
    handler: (_context, { openApiDocument }) => ({ document: openApiDocument() }),
  }),
];
