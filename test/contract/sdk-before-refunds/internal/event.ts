import { z } from 'zod';
import { WebhookPayloadError } from '../errors.ts';
import { WebhookEventSchema, WebhookEventTypeSchema } from '../protocol/index.ts';
import { KnownEventSchema, type WebhookEvent } from '../responses.ts';
import { lenientGuard } from './lenient-guard.ts';
import { isUint8Array, type RawBody } from './signature.ts';

/** What every event has, of any type, now or later: enough to log it, de-duplicate it and route it. */
const EventFrameSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  environment: z.string(),
  createdAt: z.string(),
  data: z.looseObject({}),
});

const hasOwn = Object.prototype.hasOwnProperty;
const isPlainRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !hasOwn.call(value, '__proto__');

/** `EventFrameSchema` as a check in place (see `lenient-guard.ts` for why `__proto__` sends it to zod). */
const isEventFrame = (value: unknown): value is z.output<typeof EventFrameSchema> => {
  if (!isPlainRecord(value)) return false;
  const { id, type, environment, createdAt, data } = value;
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    typeof type === 'string' &&
    type.length > 0 &&
    typeof environment === 'string' &&
    typeof createdAt === 'string' &&
    isPlainRecord(data)
  );
};

const KNOWN_TYPES: ReadonlySet<string> = new Set(WebhookEventTypeSchema.options);
/** `KnownEventSchema` (the lenient event) as a check in place; undefined if the contract outgrows the guard. */
const isKnownEvent = lenientGuard(WebhookEventSchema);

/** The raw body as bytes, without Node's `Buffer` (a `Buffer` is a `Uint8Array`). */
export const toBytes = (payload: RawBody): Uint8Array =>
  typeof payload === 'string'
    ? new TextEncoder().encode(payload)
    : isUint8Array(payload)
      ? payload
      : new Uint8Array(payload);

// One decoder for every event: `decode` without `stream` keeps no state between calls.
const decoder = new TextDecoder();
const toText = (payload: RawBody): string =>
  typeof payload === 'string'
    ? payload
    : decoder.decode(isUint8Array(payload) ? payload : new Uint8Array(payload));

/**
 * Reads a verified body as an event. A type this SDK knows is checked against the contract (read
 * leniently); a type it does not know is returned as it came, so a service that adds event types never makes
 * an older receiver fail. Only a body that is not an event at all is refused, as a `WebhookPayloadError`
 * (a `SignatureVerificationError`: the documented handler answers 400, not 500).
 *
 * The usual event is checked in place by guards that accept exactly what the lenient schemas accept, and
 * returned as parsed; anything they do not pass goes through zod as before, which decides and gives the error.
 */
export const parseEvent = (payload: RawBody): WebhookEvent => {
  let json: unknown;
  try {
    json = JSON.parse(toText(payload));
  } catch (cause) {
    throw new WebhookPayloadError({
      code: 'webhook_payload_not_json',
      message: 'The webhook body is signed but is not JSON.',
      cause,
    });
  }
  if (isEventFrame(json)) {
    if (!KNOWN_TYPES.has(json.type)) return json as unknown as WebhookEvent;
    if (isKnownEvent?.(json)) return json as unknown as WebhookEvent;
  }
  return parseEventWithZod(json);
};

/** What a JSON value is, in words. */
const kindOf = (json: unknown): string =>
  json === null ? 'null' : Array.isArray(json) ? 'an array' : `a ${typeof json}`;

/** The value at `path` in `json`, or undefined where the path leads nowhere. */
const valueAt = (json: unknown, path: readonly PropertyKey[]): unknown => {
  let value = json;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !hasOwn.call(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
};

/**
 * The first field zod found wrong, as a developer would fix it: `data.session.amount is missing`, or
 * `environment is invalid (…)`. zod lists issues in the order of the schema's fields, so the first is stable.
 */
const firstWrongField = (json: unknown, error: z.ZodError): string => {
  const issue = error.issues[0];
  if (!issue) return 'it does not match the contract';
  if (issue.path.length === 0) return `the body is ${kindOf(json)}, not an object`;
  const path = issue.path.map(String).join('.');
  if (valueAt(json, issue.path) === undefined) return `${path} is missing`;
  return `${path} is invalid (${issue.message})`;
};

/** The reading of record: every event the guards do not pass, with zod's error as the cause. */
const parseEventWithZod = (json: unknown): WebhookEvent => {
  const frame = EventFrameSchema.safeParse(json);
  if (!frame.success) {
    throw new WebhookPayloadError({
      code: 'webhook_payload_invalid',
      message: `The webhook body is signed but is not an event: ${firstWrongField(json, frame.error)}. Every event has id, type, environment, createdAt and data; generateTestEvent builds one.`,
      cause: frame.error,
    });
  }
  if (!WebhookEventTypeSchema.safeParse(frame.data.type).success) {
    return frame.data as unknown as WebhookEvent;
  }
  const known = KnownEventSchema.safeParse(json);
  if (!known.success) {
    throw new WebhookPayloadError({
      code: 'webhook_payload_invalid',
      message: `The webhook body is signed but is not a valid ${frame.data.type} event: ${firstWrongField(json, known.error)}.`,
      cause: known.error,
    });
  }
  return known.data as WebhookEvent;
};
