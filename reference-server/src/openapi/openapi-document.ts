import {
  ErrorBodySchema,
  MetaSchema,
  PaginationSchema,
  StatusMessageSchema,
  WebhookEventSchema,
} from '@servicepay/node/protocol';
import type { DocumentedOperation } from '../routes/operation.ts';
import { StatusEventSchema } from '../routes/session-events.ts';
import { HEADERS, type Json, ref, SchemaComponents, SECURITY_SCHEMES } from './components.ts';
import { OPERATIONS } from './operations.ts';
import { operationObject } from './path-items.ts';
import { answersCorsAt, preflightOf } from './preflights.ts';

/**
 * The OpenAPI 3.1 document of the reference server, built from the protocol's zod schemas with zod's own JSON
 * Schema output (never a hand-written copy): every path, method, parameter, body and answer (in the envelope),
 * the security schemes, and the merchant webhook as a 3.1 `webhooks` entry.
 *
 * @example
 * const document = buildOpenApiDocument();
 * document.paths['/api/widget/sessions'].post.requestBody; // { $ref-ed CreateSessionParams }
 */
export function buildOpenApiDocument(operations: readonly DocumentedOperation[] = OPERATIONS) {
  const schemas = new SchemaComponents();
  schemas.output(MetaSchema, 'Meta');
  schemas.output(PaginationSchema, 'Pagination');
  schemas.output(ErrorBodySchema, 'Error');
  schemas.output(StatusMessageSchema, 'StatusMessage');
  schemas.output(WebhookEventSchema, 'WebhookEvent');
  schemas.output(StatusEventSchema, 'StatusEvent');

  const paths: Record<string, Record<string, Json>> = {};
  for (const operation of operations) {
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, Json>)[operation.method] = operationObject(operation, schemas);
  }
  // A checkout route's CORS preflight follows from the route being a checkout route (no entry of its own).
  for (const [path, methods] of Object.entries(paths)) {
    const first = Object.values(methods)[0] as { operationId: string } | undefined;
    if (first && answersCorsAt(path)) methods.options = preflightOf(path, first.operationId);
  }

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'ServicePay reference server',
      version: '0.1.0',
      description:
        "Bank-transfer payment sessions, the checkout widget's endpoints, webhooks and the simulated bank. " +
        'Every JSON answer is `{ meta, data }` (lists add `pagination`); errors are `{ meta: { statusCode, message, code, requestId }, errors? }`. ' +
        "Schemas are generated from `@servicepay/node/protocol` with zod's `z.toJSONSchema`. The wire contract and its decisions: docs/protocol.md.",
    },
    servers: [
      {
        url: '/',
        description:
          'The server that answered this document: a local or test instance, or production; test and live data are told apart by the key, not the server.',
        'x-internal': false,
      },
    ],
    tags: [
      { name: 'Sessions', description: 'Payment sessions (secret key).' },
      { name: 'Refunds', description: "Money sent back to the payer's account (secret key)." },
      {
        name: 'PaymentLinks',
        description: 'Payment links: a page payers open to pay a fixed amount, and its QR code (secret key).',
      },
      {
        name: 'Checkout',
        description: 'What the widget calls (client secret, widget token, publishable key).',
      },
      { name: 'Webhooks', description: 'Webhook endpoints, deliveries and resends (secret key).' },
      { name: 'Testing', description: 'Test-mode helpers (secret test key).' },
      { name: 'Bank', description: 'The simulated partner bank.' },
      { name: 'Service', description: 'Health and this document.' },
      {
        name: 'Portal',
        description: 'The developer portal: HTML pages and url-encoded forms for a browser.',
      },
    ],
    paths,
    webhooks: {
      sessionEvent: {
        post: {
          summary: 'A session event, posted to each subscribed endpoint',
          description:
            'Verify `X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` on the raw body before parsing; de-duplicate on `id`. Any 2xx within 10 s acknowledges it; anything else is retried for about three days.',
          operationId: 'sessionEvent',
          security: [{ webhookSignature: [] }],
          parameters: [
            { name: 'X-Service-Event-Id', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'X-Service-Event-Type', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'X-Service-Delivery-Id', in: 'header', required: true, schema: { type: 'string' } },
            {
              name: 'X-Service-Attempt',
              in: 'header',
              required: true,
              schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 100 },
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookEvent') } } },
          responses: { '2XX': { description: 'Received.' } },
        },
      },
    },
    components: {
      schemas: schemas.components(),
      securitySchemes: SECURITY_SCHEMES,
      headers: HEADERS,
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

let cached: OpenApiDocument | undefined;

/**
 * The document, built once per process (the schemas do not change while it runs).
 *
 * @example
 * app.get('/openapi.json', (_req, res) => res.json(openApiDocument()));
 */
export function openApiDocument(): OpenApiDocument {
  cached ??= buildOpenApiDocument();
  return cached;
}
