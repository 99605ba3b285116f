import { envelopeOf, listEnvelopeOf } from '@servicepay/node/protocol';
import { z } from 'zod';
import { EXPOSED_HEADERS, PREFLIGHT } from '../middleware/cors.ts';
import type { SecurityName } from '../routes/operation.ts';

/** A piece of the document, as JSON. */
export type Json = Record<string, unknown>;
/** The security schemes of the document: the operations' and the signature of the webhooks it sends. */
type SchemeName = SecurityName | 'webhookSignature';
type Registry = ReturnType<typeof z.registry<{ id: string }>>;

const TARGET = 'draft-2020-12' as const;
export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

export const STATUS_TEXT: Record<number, string> = {
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

export const SECURITY_SCHEMES: Record<SchemeName, Json> = {
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
export function inline(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: TARGET,
    io: 'input',
    override: integerFormat,
  }) as Json;
  return rest;
}

export const header = (id: string) => ({ $ref: `#/components/headers/${id}` });
export const requestIdHeader = { 'Request-Id': header('RequestId') };
export const rateLimitHeaders = {
  'RateLimit-Limit': header('RateLimitLimit'),
  'RateLimit-Remaining': header('RateLimitRemaining'),
  'RateLimit-Reset': header('RateLimitReset'),
};
export const corsHeaders = {
  'Access-Control-Allow-Origin': header('AccessControlAllowOrigin'),
  'Access-Control-Expose-Headers': header('AccessControlExposeHeaders'),
  Vary: header('VaryOrigin'),
};

/** The response headers of the document, each declared once and referenced from every answer that sends it. */
export const HEADERS: Record<string, Json> = {
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
 * The path's `{name}` parameters: each a non-empty string.
 *
 * @example
 * pathParametersOf('/api/refunds/{id}'); // [{ name: 'id', in: 'path', required: true, … }]
 */
export const pathParametersOf = (path: string): Json[] =>
  [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1 },
  }));

/**
 * The document's `components.schemas`, collected as the path items name them: each zod schema under its name
 * (two schemas under one name are refused), the envelope of each answer's `data`, and each request body; turned
 * into JSON Schema 2020-12 by zod's own `z.toJSONSchema`, never a hand-written copy.
 *
 * @example
 * const schemas = new SchemaComponents();
 * schemas.envelope(RefundSchema, 'Refund', false); // 'RefundResponse'
 */
export class SchemaComponents {
  private readonly outputs: Registry = z.registry<{ id: string }>();
  private readonly inputs: Registry = z.registry<{ id: string }>();
  private readonly named = new Map<string, z.ZodType>();
  private readonly envelopes = new Set<string>();

  /** Names a schema of what the service sends. */
  output(schema: z.ZodType, id: string): void {
    this.register(this.outputs, schema, id);
  }

  /** Names a request body's schema (described as the client sends it). */
  input(schema: z.ZodType, id: string): void {
    this.register(this.inputs, schema, id);
  }

  /** Names `data` and its envelope (`<name>Response`, or `<name>List` for a list); returns the envelope's name. */
  envelope(data: z.ZodType, name: string, list: boolean): string {
    this.output(data, name);
    const id = `${name}${list ? 'List' : 'Response'}`;
    if (!this.envelopes.has(id)) {
      this.envelopes.add(id);
      this.output(list ? listEnvelopeOf(data) : envelopeOf(data), id);
    }
    return id;
  }

  /** Every schema named so far, as `components.schemas`. */
  components(): Record<string, Json> {
    const schemas = { ...componentsOf(this.outputs, 'output') };
    for (const [id, schema] of Object.entries(componentsOf(this.inputs, 'input'))) {
      if (id in schemas) throw new Error(`schema ${id} is both an input and an output`);
      schemas[id] = schema;
    }
    return schemas;
  }

  private register(registry: Registry, schema: z.ZodType, id: string): void {
    const existing = this.named.get(id);
    if (existing) {
      if (existing !== schema) throw new Error(`two schemas named ${id}`);
      return;
    }
    this.named.set(id, schema);
    registry.add(schema, { id });
  }
}
