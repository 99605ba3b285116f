import { isDeepStrictEqual } from 'node:util';
import {
  BalanceSchema,
  BalanceTransactionSchema,
  BootstrapResultSchema,
  CreatedSessionSchema,
  DeletedWebhookEndpointSchema,
  ErrorBodySchema,
  envelopeOf,
  listEnvelopeOf,
  RefundSchema,
  ResendEventResultSchema,
  SessionSchema,
  SimulatedTransferSchema,
  TestAccountSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from '@servicepay/node/protocol';
import { afterEach, expect } from 'vitest';
import type { z } from 'zod';

/** The contract's answer for each route the suite calls: method, path pattern, success status, schema. */
const ROUTES: ReadonlyArray<[string, RegExp, number, z.ZodType]> = [
  ['POST', /^\/api\/widget\/sessions$/, 201, envelopeOf(CreatedSessionSchema)],
  ['GET', /^\/api\/widget\/sessions$/, 200, listEnvelopeOf(SessionSchema)],
  ['GET', /^\/api\/widget\/sessions\/[^/]+$/, 200, envelopeOf(SessionSchema)],
  ['POST', /^\/api\/widget\/sessions\/[^/]+\/cancel$/, 200, envelopeOf(SessionSchema)],
  ['POST', /^\/api\/widget\/bootstrap$/, 200, envelopeOf(BootstrapResultSchema)],
  ['POST', /^\/api\/test\/transfers$/, 200, envelopeOf(SimulatedTransferSchema)],
  ['POST', /^\/api\/test\/sessions\/[^/]+\/account$/, 200, envelopeOf(TestAccountSchema)],
  ['POST', /^\/api\/test\/sessions\/[^/]+\/expire$/, 200, envelopeOf(SessionSchema)],
  ['POST', /^\/api\/test\/sessions\/[^/]+\/account\/expire$/, 200, envelopeOf(SessionSchema)],
  ['POST', /^\/api\/webhooks$/, 201, envelopeOf(WebhookEndpointWithSecretSchema)],
  ['GET', /^\/api\/webhooks$/, 200, listEnvelopeOf(WebhookEndpointSchema)],
  ['GET', /^\/api\/webhooks\/[^/]+$/, 200, envelopeOf(WebhookEndpointSchema)],
  ['PATCH', /^\/api\/webhooks\/[^/]+$/, 200, envelopeOf(WebhookEndpointSchema)],
  ['DELETE', /^\/api\/webhooks\/[^/]+$/, 200, envelopeOf(DeletedWebhookEndpointSchema)],
  ['POST', /^\/api\/webhooks\/[^/]+\/roll-secret$/, 200, envelopeOf(WebhookEndpointWithSecretSchema)],
  ['GET', /^\/api\/webhooks\/[^/]+\/deliveries$/, 200, listEnvelopeOf(WebhookDeliverySchema)],
  ['POST', /^\/api\/events\/[^/]+\/resend$/, 202, envelopeOf(ResendEventResultSchema)],
  ['POST', /^\/api\/widget\/sessions\/[^/]+\/refunds$/, 201, envelopeOf(RefundSchema)],
  ['GET', /^\/api\/balance-transactions$/, 200, listEnvelopeOf(BalanceTransactionSchema)],
  ['GET', /^\/api\/balance-transactions\/[^/]+$/, 200, envelopeOf(BalanceTransactionSchema)],
  ['GET', /^\/api\/balance$/, 200, envelopeOf(BalanceSchema)],
];

/** One answer the suite saw, as checked against the contract. */
export interface Seen {
  method: string;
  path: string;
  status: number;
  requestId: string | null;
  body: unknown;
}

/**
 * Holds a JSON answer to the contract: its schema parses it, and parsing it drops nothing, so the service
 * sends no field the contract does not declare (the contract's object schemas strip unknown keys; an
 * undeclared field shows up as a difference). Returns what is wrong, or null.
 */
export function contractViolation(
  method: string,
  path: string,
  status: number,
  body: unknown,
): string | null {
  let schema: z.ZodType;
  if (status >= 400) schema = ErrorBodySchema;
  else {
    const route = ROUTES.find(([m, pattern]) => m === method && pattern.test(path));
    if (route === undefined) return `no contract schema for ${method} ${path}`;
    if (route[2] !== status) return `${method} ${path} answered ${status}, the contract says ${route[2]}`;
    schema = route[3];
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) return `${method} ${path} ${status}: ${parsed.error.message}`;
  if (!isDeepStrictEqual(parsed.data, body)) {
    return `${method} ${path} ${status} carries fields the contract does not declare: ${JSON.stringify(body)}`;
  }
  if ((body as { meta?: { statusCode?: unknown } }).meta?.statusCode !== status) {
    return `${method} ${path}: meta.statusCode is not the HTTP status ${status}`;
  }
  return null;
}

/**
 * A `fetch` for the SDK (its `fetch` option) and the suite's own calls that checks every answer against the
 * contract's schemas as it passes; each test then fails if any answer of its broke the contract.
 */
export function contractFetch() {
  const seen: Seen[] = [];
  const violations: string[] = [];
  afterEach(() => {
    const found = violations.splice(0);
    expect(found).toEqual([]);
  });
  const fetchChecked = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    const { pathname } = new URL(url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const text = await response.clone().text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      violations.push(`${method} ${pathname} ${response.status}: not JSON: ${text.slice(0, 200)}`);
      return response;
    }
    const requestId = response.headers.get('request-id');
    seen.push({ method, path: pathname, status: response.status, requestId, body });
    if (requestId === null || !/^req_[0-9A-Za-z]+$/.test(requestId)) {
      violations.push(`${method} ${pathname}: no Request-Id header`);
    }
    const violation = contractViolation(method, pathname, response.status, body);
    if (violation !== null) violations.push(violation);
    return response;
  };
  return { fetch: fetchChecked, seen };
}
