import {
  ErrorBodySchema,
  envelopeOf,
  listEnvelopeOf,
  MetaSchema,
  PaginationSchema,
  StatusMessageSchema,
  WebhookEventSchema,
} from '@servicepay/node/protocol';
import { z } from 'zod';
import { OPERATIONS, type OperationSpec, type SecurityName } from './operations.ts';

type Json = Record<string, unknown>;
type Registry = ReturnType<typeof z.registry<{ id: string }>>;

const TARGET = 'draft-2020-12' as const;
const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: malformed, or a field failed validation (`errors[]` names it).',
  401: 'Missing or invalid credentials.',
  403: 'A valid credential that may not do this (publishable key, KYC, environment, another business).',
  404: 'No such resource or route.',
  409: 'Conflict with the current state (reference or idempotency key reused, session not active).',
  410: 'Gone: the session ended.',
  413: 'Body too large.',
  415: 'Body is not of the required type.',
  429: 'Rate limited: retry after `Retry-After` seconds.',
  503: 'The service cannot reach its database right now: retry after `Retry-After` seconds.',
};

const SECURITY_SCHEMES: Record<SecurityName, Json> = {
  secretKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sk_test_… | sk_live_…',
    description: 'Secret key: server-to-server calls. Routes to the environment of the key (spec §5.4).',
  },
  publishableKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'pk_test_… | pk_live_…',
    description: "Publishable key: reads the business's public checkout profile only.",
  },
  widgetToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'wt_…',
    description: 'Widget token from POST /api/widget/bootstrap, bound to one session. Never in a URL.',
  },
  bankSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Bank-Signature',
    description: '`t=<unix seconds>,v1=<hex HMAC-SHA256(bank secret, "<t>.<raw body>")>`, within 300 s.',
  },
  portalSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'sp_portal',
    description:
      'Developer portal session (HttpOnly, SameSite=Strict, Path=/portal); every form also carries `_csrf`.',
  },
};

/** Each schema as JSON Schema 2020-12, by zod's own `z.toJSONSchema`, with refs into `components.schemas`. */
function componentsOf(registry: Registry, io: 'input' | 'output'): Record<string, Json> {
  const { schemas } = z.toJSONSchema(registry, {
    target: TARGET,
    io,
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    out[id] = rest;
  }
  return out;
}

/** A zod object as an inline JSON Schema (queries, portal forms). */
function inline(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: TARGET, io: 'input' }) as Json;
  return rest;
}

function parametersOf(operation: OperationSpec): Json[] {
  const parameters: Json[] = [];
  for (const match of operation.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
    parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string', minLength: 1 } });
  }
  if (operation.query) {
    const schema = inline(operation.query) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      parameters.push({
        name,
        in: 'query',
        required: schema.required?.includes(name) ?? false,
        schema: property,
      });
    }
  }
  for (const header of operation.headers ?? []) {
    parameters.push({
      name: header.name,
      in: 'header',
      required: header.required,
      description: header.description,
      schema: header.schema,
    });
  }
  return parameters;
}

const requestIdHeader = { 'Request-Id': { $ref: '#/components/headers/RequestId' } };

/**
 * The OpenAPI 3.1 document of the reference server, built from the protocol's zod schemas with zod's own JSON
 * Schema output (never a hand-written copy): every path, method, parameter, body and answer (in the envelope),
 * the security schemes, and the merchant webhook as a 3.1 `webhooks` entry.
 *
 * @example
 * const document = buildOpenApiDocument();
 * document.paths['/api/widget/sessions'].post.requestBody; // { $ref-ed CreateSessionParams }
 */
export function buildOpenApiDocument(operations: readonly OperationSpec[] = OPERATIONS) {
  const outputs: Registry = z.registry<{ id: string }>();
  const inputs: Registry = z.registry<{ id: string }>();
  const named = new Map<string, z.ZodType>();
  const register = (registry: Registry, schema: z.ZodType, id: string): z.ZodType => {
    const existing = named.get(id);
    if (existing) {
      if (existing !== schema) throw new Error(`two schemas named ${id}`);
      return existing;
    }
    named.set(id, schema);
    registry.add(schema, { id });
    return schema;
  };
  register(outputs, MetaSchema, 'Meta');
  register(outputs, PaginationSchema, 'Pagination');
  register(outputs, ErrorBodySchema, 'Error');
  register(outputs, StatusMessageSchema, 'StatusMessage');
  const envelopes = new Map<string, z.ZodType>();
  const envelopeName = (data: z.ZodType, name: string, list: boolean) => {
    register(outputs, data, name);
    const id = `${name}${list ? 'List' : 'Response'}`;
    if (!envelopes.has(id)) {
      const envelope = list ? listEnvelopeOf(data) : envelopeOf(data);
      envelopes.set(id, envelope);
      register(outputs, envelope, id);
    }
    return id;
  };
  register(outputs, WebhookEventSchema, 'WebhookEvent');

  const paths: Record<string, Record<string, Json>> = {};
  for (const operation of operations) {
    const portal = operation.tag === 'Portal';
    const responses: Record<string, Json> = {};
    for (const [status, success] of Object.entries(operation.success)) {
      switch (success.kind) {
        case 'json':
          responses[status] = {
            description: success.description,
            headers: requestIdHeader,
            content: {
              'application/json': {
                schema: ref(envelopeName(success.data, success.name, success.list ?? false)),
              },
            },
          };
          break;
        case 'html':
          responses[status] = {
            description: success.description,
            content: { 'text/html': { schema: { type: 'string' } } },
          };
          break;
        case 'redirect':
          responses[status] = {
            description: success.description,
            headers: { Location: { schema: { type: 'string' }, description: 'Where to go next.' } },
          };
          break;
        case 'event-stream':
          responses[status] = {
            description: success.description,
            content: { 'text/event-stream': { schema: { type: 'string' } } },
            'x-servicepay-event-data': ref('StatusMessage'),
          };
          break;
        case 'asset':
          responses[status] = {
            description: success.description,
            content: portal
              ? {
                  'text/css': { schema: { type: 'string' } },
                  'text/javascript': { schema: { type: 'string' } },
                }
              : { 'application/json': { schema: { type: 'object' } } },
          };
          break;
      }
    }
    for (const status of new Set(operation.errors)) {
      const text = STATUS_TEXT[status] ?? 'Error.';
      responses[String(status)] = portal
        ? { description: text, content: { 'text/html': { schema: { type: 'string' } } } }
        : {
            description: text,
            headers:
              status === 429 || status === 503
                ? {
                    ...requestIdHeader,
                    'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' },
                  }
                : requestIdHeader,
            content: { 'application/json': { schema: ref('Error') } },
          };
    }
    responses.default = portal
      ? {
          description: 'A fault of the service, as a page.',
          content: { 'text/html': { schema: { type: 'string' } } },
        }
      : {
          description: 'A fault of the service (500 internal_error), never a stack trace.',
          headers: requestIdHeader,
          content: { 'application/json': { schema: ref('Error') } },
        };

    const body: Json | undefined = operation.body
      ? {
          required: operation.body.required,
          content: {
            'application/json': { schema: ref(operation.body.name) },
          },
        }
      : operation.form
        ? {
            required: true,
            content: { 'application/x-www-form-urlencoded': { schema: inline(operation.form) } },
          }
        : undefined;
    if (operation.body) register(inputs, operation.body.schema, operation.body.name);

    const parameters = parametersOf(operation);
    paths[operation.path] ??= {};
    const entry = paths[operation.path] as Record<string, Json>;
    entry[operation.method] = {
      operationId: operation.operationId,
      summary: operation.summary,
      ...(operation.description ? { description: operation.description } : {}),
      tags: [operation.tag],
      security: operation.security.map((name) => ({ [name]: [] })),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(body ? { requestBody: body } : {}),
      responses,
    };
  }

  const schemas = { ...componentsOf(outputs, 'output') };
  for (const [id, schema] of Object.entries(componentsOf(inputs, 'input'))) {
    if (id in schemas) throw new Error(`schema ${id} is both an input and an output`);
    schemas[id] = schema;
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
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Sessions', description: 'Payment sessions (secret key).' },
      { name: 'Refunds', description: "Money sent back to the payer's account (secret key)." },
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
          parameters: [
            { name: 'X-Service-Signature', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'X-Service-Event-Id', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'X-Service-Event-Type', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'X-Service-Delivery-Id', in: 'header', required: true, schema: { type: 'string' } },
            {
              name: 'X-Service-Attempt',
              in: 'header',
              required: true,
              schema: { type: 'integer', minimum: 1 },
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookEvent') } } },
          responses: { '2XX': { description: 'Received.' } },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: SECURITY_SCHEMES,
      headers: {
        RequestId: {
          description: 'The request id (`req_…`), repeated in error envelopes.',
          schema: { type: 'string' },
        },
      },
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
