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
import { EXPOSED_HEADERS, isWidgetRoute, PREFLIGHT } from '../middleware/cors.ts';
import type { DocumentedOperation, HeaderSpec, SecurityName } from '../routes/operation.ts';
import { StatusEventSchema } from '../routes/session-events.ts';
import { OPERATIONS } from './operations.ts';

type Json = Record<string, unknown>;
/** The security schemes of the document: the operations' and the signature of the webhooks it sends. */
type SchemeName = SecurityName | 'webhookSignature';
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
  429: 'Rate limited: retry after `Retry-After` seconds (`RateLimit-*` say what is left of the budget).',
  503: 'The service cannot reach its database right now: retry after `Retry-After` seconds.',
};

const SECURITY_SCHEMES: Record<SchemeName, Json> = {
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
  webhookSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Signature',
    description:
      'On the webhooks the service sends: `t=<unix seconds>,v1=<hex HMAC-SHA256(endpoint secret, "<t>.<raw body>")>` (a second `v1=` while a rolled secret overlaps). Verify it on the raw body before parsing, within 300 s.',
  },
  portalSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'sp_portal',
    description:
      'Developer portal session (HttpOnly, SameSite=Strict, Path=/portal); every form also carries `_csrf`.',
  },
};

/**
 * zod writes a safe integer as `type: integer` with its bounds; the document also names its format (`int64`:
 * every safe integer fits), as an API's generated clients expect. Nothing else is changed.
 */
const integerFormat = ({ jsonSchema }: { jsonSchema: Json }): void => {
  if (jsonSchema.type === 'integer' && jsonSchema.format === undefined) jsonSchema.format = 'int64';
};

/** Each schema as JSON Schema 2020-12, by zod's own `z.toJSONSchema`, with refs into `components.schemas`. */
function componentsOf(registry: Registry, io: 'input' | 'output'): Record<string, Json> {
  const { schemas } = z.toJSONSchema(registry, {
    target: TARGET,
    io,
    uri: (id) => `#/components/schemas/${id}`,
    override: integerFormat,
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
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: TARGET,
    io: 'input',
    override: integerFormat,
  }) as Json;
  return rest;
}

/** What an operation with `idempotency` reads (`middleware/idempotency.ts`). */
const idempotencyKey: HeaderSpec = {
  name: 'Idempotency-Key',
  description:
    'Same key, route and body within 24 h answers the first success again, byte for byte (Idempotent-Replayed: true); another body or route: 409 idempotency_key_reused.',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/** The path's `{name}` parameters: each a non-empty string. */
const pathParametersOf = (path: string): Json[] =>
  [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1 },
  }));

function parametersOf(operation: DocumentedOperation): Json[] {
  const parameters: Json[] = pathParametersOf(operation.path);
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
  const headers = [...(operation.headers ?? []), ...(operation.idempotency ? [idempotencyKey] : [])];
  for (const header of headers) {
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

const header = (id: string) => ({ $ref: `#/components/headers/${id}` });
const requestIdHeader = { 'Request-Id': header('RequestId') };
const rateLimitHeaders = {
  'RateLimit-Limit': header('RateLimitLimit'),
  'RateLimit-Remaining': header('RateLimitRemaining'),
  'RateLimit-Reset': header('RateLimitReset'),
};
const corsHeaders = {
  'Access-Control-Allow-Origin': header('AccessControlAllowOrigin'),
  'Access-Control-Expose-Headers': header('AccessControlExposeHeaders'),
  Vary: header('VaryOrigin'),
};

/** The response headers of the document, each declared once and referenced from every answer that sends it. */
const HEADERS: Record<string, Json> = {
  RequestId: {
    description: 'The request id (`req_…`), repeated in error envelopes.',
    schema: { type: 'string', pattern: '^req_[0-9A-Za-z]{16}$', maxLength: 20 },
  },
  RateLimitLimit: {
    description:
      'Requests the budget this request spent allows per window (the business per environment for a secret key; the calling address for the checkout). Sent on every answer that spent a budget.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
  RateLimitRemaining: {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
  RateLimitReset: {
    description: 'Seconds until the window frees up again.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 },
  },
  IdempotentReplayed: {
    description:
      '`true` when this is the remembered answer to an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', const: 'true' },
  },
  AccessControlAllowOrigin: {
    description:
      "The caller's origin, echoed only when it is one of the widget hosts' (the checkout frame runs there); absent for any other origin, so a browser refuses the answer to another page's script.",
    schema: { type: 'string', maxLength: 2048 },
  },
  AccessControlExposeHeaders: {
    description: 'The headers the checkout frame may read, sent with `Access-Control-Allow-Origin`.',
    schema: { type: 'string', const: EXPOSED_HEADERS },
  },
  AccessControlAllowMethods: {
    description: 'The methods a widget host may use on this route.',
    required: true,
    schema: { type: 'string', const: PREFLIGHT.allowMethods },
  },
  AccessControlAllowHeaders: {
    description: 'The request headers a widget host may send.',
    required: true,
    schema: { type: 'string', const: PREFLIGHT.allowHeaders },
  },
  AccessControlMaxAge: {
    description: 'Seconds the browser may keep this preflight.',
    required: true,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400, const: PREFLIGHT.maxAgeSeconds },
  },
  VaryOrigin: {
    description: 'The answer depends on `Origin` (its CORS headers do).',
    schema: { type: 'string', const: 'Origin' },
  },
};

/**
 * Statuses the middleware in front of every route answers, beside each operation's own (app.ts mounts them):
 * 413 for a declared body over the limit (`refuseOversizedBody`, every route), 429 for a business over its
 * budget (`refuseOverBudget`, every `/api/` route), 503 when the database does not answer (the error handler,
 * every route that reads it: all but this document), and on a JSON POST or PATCH 400 (malformed JSON, a lone
 * surrogate) and 415 (a body that is not JSON; `jsonBody`). The bank's notification reads its raw body itself.
 */
function statusesOf(operation: DocumentedOperation): number[] {
  const statuses = new Set(operation.errors);
  if (operation.tag === 'Portal') return [...statuses].sort((a, b) => a - b);
  statuses.add(413);
  if (operation.path.startsWith('/api/')) statuses.add(429);
  if (operation.operationId !== 'openApiDocument') statuses.add(503);
  const jsonWrite = operation.method === 'post' || operation.method === 'patch';
  if (jsonWrite && operation.operationId !== 'bankNotification') {
    statuses.add(400);
    statuses.add(415);
  }
  return [...statuses].sort((a, b) => a - b);
}

/** Whether an operation's answers spent a rate-limit budget, so carry `RateLimit-*`. */
const spendsBudget = (operation: DocumentedOperation): boolean =>
  operation.tag !== 'Portal' && statusesOf(operation).includes(429);

/** The checkout's routes answer with CORS headers (middleware/cors.ts decides which routes those are). */
const answersCorsAt = (path: string): boolean => isWidgetRoute(path.replace(/\{[^}]+\}/g, 'x'));
const answersCors = (operation: DocumentedOperation): boolean => answersCorsAt(operation.path);

/**
 * The CORS preflight of a checkout route, as `middleware/cors.ts` answers it before any route is reached (so it
 * is no entry of the table: it follows from the route being a checkout route). 204 with what a widget host may
 * send to the host's origin; 403 to any other origin. It spends no budget and reads no database.
 */
function preflightOf(path: string, operationId: string): Json {
  return {
    operationId: `${operationId}Preflight`,
    summary: 'CORS preflight from a widget host',
    description:
      "Answered before the route: to the origin of a widget host (where the checkout frame runs), 204 with the methods and headers it may use; to any other origin, 403 `forbidden` (the browser then refuses the page's request).",
    tags: ['Checkout'],
    security: [],
    parameters: [
      ...pathParametersOf(path),
      {
        name: 'Origin',
        in: 'header',
        required: true,
        description: "The calling page's origin.",
        schema: { type: 'string', maxLength: 2048, pattern: '^[\\x21-\\x7e]+$' },
      },
      {
        name: 'Access-Control-Request-Method',
        in: 'header',
        required: false,
        description: 'The method the browser is asking about.',
        schema: { type: 'string', maxLength: 16, pattern: '^[A-Za-z]+$' },
      },
    ],
    responses: {
      '204': {
        description: 'The origin is a widget host: what it may send.',
        headers: {
          ...requestIdHeader,
          ...corsHeaders,
          'Access-Control-Allow-Methods': header('AccessControlAllowMethods'),
          'Access-Control-Allow-Headers': header('AccessControlAllowHeaders'),
          'Access-Control-Max-Age': header('AccessControlMaxAge'),
        },
      },
      '403': {
        description: 'The origin is not a widget host.',
        headers: { ...requestIdHeader, Vary: header('VaryOrigin') },
        content: { 'application/json': { schema: ref('Error') } },
      },
      default: {
        description: 'A fault of the service (500 internal_error), never a stack trace.',
        headers: requestIdHeader,
        content: { 'application/json': { schema: ref('Error') } },
      },
    },
  };
}

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
  register(outputs, StatusEventSchema, 'StatusEvent');

  const paths: Record<string, Record<string, Json>> = {};
  for (const operation of operations) {
    const portal = operation.tag === 'Portal';
    const budgeted = spendsBudget(operation);
    const cors = answersCors(operation);
    const replays = operation.idempotency !== undefined;
    /** The headers of an answer with `status`: the request id, then the budget's, CORS, and the replay mark. */
    const headersFor = (status: number): Json => ({
      ...requestIdHeader,
      ...(budgeted && status < 500 ? rateLimitHeaders : {}),
      ...(status === 429 || status === 503 ? { 'Retry-After': header('RetryAfter') } : {}),
      ...(cors ? corsHeaders : {}),
      ...(replays && status < 300 ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {}),
    });
    const responses: Record<string, Json> = {};
    for (const [status, success] of Object.entries(operation.success)) {
      switch (success.kind) {
        case 'json':
          responses[status] = {
            description: success.description,
            headers: headersFor(Number(status)),
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
          // OpenAPI 3.1 has no field for the messages of a stream (3.2's `itemSchema`): the stream is a string,
          // and its messages are the `StatusEvent` component, pointed at from the media type.
          responses[status] = {
            description: success.description,
            headers: headersFor(Number(status)),
            content: {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description:
                    'Server-sent events: `retry: 1000`, then `StatusEvent` messages and `: heartbeat` comments.',
                },
                'x-item-schema': ref('StatusEvent'),
              },
            },
          };
          break;
        case 'stream-head':
          responses[status] = { description: success.description, headers: headersFor(Number(status)) };
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
        case 'svg':
          responses[status] = {
            description: success.description,
            headers: headersFor(Number(status)),
            content: { 'image/svg+xml': { schema: { type: 'string' } } },
          };
          break;
      }
    }
    // A HEAD answer has no body, whatever its status.
    const errorContent =
      operation.method === 'head' ? {} : { content: { 'application/json': { schema: ref('Error') } } };
    for (const status of statusesOf(operation)) {
      const text = STATUS_TEXT[status] ?? 'Error.';
      responses[String(status)] = portal
        ? {
            description: text,
            // Sign-in's 429 says when to try again, like the API's.
            ...(status === 429 ? { headers: { 'Retry-After': header('RetryAfter') } } : {}),
            content: { 'text/html': { schema: { type: 'string' } } },
          }
        : { description: text, headers: headersFor(status), ...errorContent };
    }
    responses.default = portal
      ? {
          description: 'A fault of the service, as a page.',
          content: { 'text/html': { schema: { type: 'string' } } },
        }
      : {
          description: 'A fault of the service (500 internal_error), never a stack trace.',
          headers: requestIdHeader,
          ...errorContent,
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

  for (const [path, methods] of Object.entries(paths)) {
    const first = Object.values(methods)[0] as { operationId: string } | undefined;
    if (first && answersCorsAt(path)) methods.options = preflightOf(path, first.operationId);
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
      schemas,
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
