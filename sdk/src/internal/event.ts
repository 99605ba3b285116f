import { z } from 'zod';
import { WebhookPayloadError } from '../errors.ts';
import { WebhookEventTypeSchema } from '../protocol/index.ts';
import { KnownEventSchema, type WebhookEvent } from '../responses.ts';
import { isArrayBuffer, type RawBody } from './signature.ts';

/** What every event has, of any type, now or later: enough to log it, de-duplicate it and route it. */
const EventFrameSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  environment: z.string(),
  createdAt: z.string(),
  data: z.looseObject({}),
});

/** The raw body as bytes, without Node's `Buffer` (a `Buffer` is a `Uint8Array`). */
export const toBytes = (payload: RawBody): Uint8Array =>
  typeof payload === 'string'
    ? new TextEncoder().encode(payload)
    : isArrayBuffer(payload)
      ? new Uint8Array(payload)
      : payload;

const toText = (payload: RawBody): string =>
  typeof payload === 'string' ? payload : new TextDecoder().decode(toBytes(payload));

/**
 * Reads a verified body as an event. A type this SDK knows is checked against the contract (read
 * leniently); a type it does not know is returned as it came, so a service that adds event types never makes
 * an older receiver fail. Only a body that is not an event at all is refused, as a `WebhookPayloadError`
 * (a `SignatureVerificationError`: the documented handler answers 400, not 500).
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
  const frame = EventFrameSchema.safeParse(json);
  if (!frame.success) {
    throw new WebhookPayloadError({
      code: 'webhook_payload_invalid',
      message: 'The webhook body is signed but is not an event (id, type, environment, createdAt, data).',
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
      message: `The webhook body is signed but is not a valid ${frame.data.type} event.`,
      cause: known.error,
    });
  }
  return known.data as WebhookEvent;
};
