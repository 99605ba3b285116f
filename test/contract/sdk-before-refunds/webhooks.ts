import { constructEventAsync, verifySignatureAsync } from './construct-event-async.ts';
import { ServicePayError } from './errors.ts';
import { parseEvent, toBytes } from './internal/event.ts';
import {
  assertRawBody,
  assertWithinTolerance,
  type ConstructEventOptions,
  DEFAULT_TOLERANCE_SECONDS,
  nowSeconds,
  parseSignatureHeader,
  type RawBody,
  SIGNATURE_BYTES,
  SIGNATURE_HEADER,
  type SignatureHeader,
  type SignatureSlot,
  secretsOf,
  signatureMismatch,
} from './internal/signature.ts';
import type { WebhookEventType } from './protocol/index.ts';
import type { WebhookEvent } from './responses.ts';
import { type GenerateTestEventOptions, generateTestEvent, type TestEvent } from './test-events.ts';

export {
  type ConstructEventOptions,
  constructEventAsync,
  DEFAULT_TOLERANCE_SECONDS,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeader,
  verifySignatureAsync,
};

type NodeCrypto = typeof import('node:crypto');

// The received signatures are decoded into these, reused by every call (verification is synchronous): a
// 32-byte typed array of its own lives on V8's heap, and `timingSafeEqual` moves such an array's bytes off the
// heap before comparing, which cost more than the rest of the header's reading. Past the eighth signature of
// one header (the service sends one per active secret: one, two while a secret rolls), each gets a new array.
const REUSED_SLOTS = 8;
const slotBytes = new ArrayBuffer(REUSED_SLOTS * SIGNATURE_BYTES);
const reusedSlots = Array.from(
  { length: REUSED_SLOTS },
  (_, index) => new Uint8Array(slotBytes, index * SIGNATURE_BYTES, SIGNATURE_BYTES),
);
const reusedSlot: SignatureSlot = (index) =>
  reusedSlots[index] ?? new Uint8Array(new ArrayBuffer(SIGNATURE_BYTES));

/**
 * `node:crypto`, taken when first needed rather than imported: the module then loads in runtimes without it
 * (edge runtimes using `fetch` and `constructEventAsync`), and only the synchronous helpers need Node.
 */
let loadedCrypto: NodeCrypto | undefined;
const nodeCrypto = (): NodeCrypto => {
  // Looked up once: `getBuiltinModule` on every webhook cost as much as the header's parsing.
  loadedCrypto ??= typeof process === 'undefined' ? undefined : process.getBuiltinModule?.('node:crypto');
  const crypto = loadedCrypto;
  if (crypto === undefined) {
    throw new ServicePayError({
      code: 'webhook_node_crypto_unavailable',
      message:
        'constructEvent, verifySignature and generateTestHeader need node:crypto, which this runtime lacks: use constructEventAsync (from @servicepay/node/webhooks).',
    });
  }
  return crypto;
};

type SecretKey = ReturnType<NodeCrypto['createSecretKey']>;

/** At most this many prepared keys are kept: a receiver holds one secret, two while it rolls one. */
const MAX_PREPARED_KEYS = 16;
const preparedKeys = new Map<string, SecretKey>();

/**
 * The secret as a `KeyObject`, made once per secret: `createHmac` given the string converts and copies it
 * into a new key on every call, 0.3–0.4 µs of the 3 µs an HMAC of 1 KB takes here (issue 12). The map only
 * ever holds secrets this process was given to verify with; past its bound it starts again rather than grow.
 */
const preparedKey = (crypto: NodeCrypto, secret: string): SecretKey => {
  let key = preparedKeys.get(secret);
  if (key === undefined) {
    if (preparedKeys.size >= MAX_PREPARED_KEYS) preparedKeys.clear();
    key = crypto.createSecretKey(secret, 'utf8');
    preparedKeys.set(secret, key);
  }
  return key;
};

const hmac = (crypto: NodeCrypto, secret: string, timestamp: number, payload: string | Uint8Array) =>
  crypto.createHmac('sha256', preparedKey(crypto, secret)).update(`${timestamp}.`).update(payload).digest();

/**
 * Checks a webhook's `X-Service-Signature` against the raw body, without reading the body: the part of
 * {@link constructEvent} that proves the body came from the service, for callers that parse it themselves.
 * Returns the signed timestamp (unix seconds); throws a `SignatureVerificationError` otherwise.
 *
 * @example
 * import { verifySignature } from '@servicepay/node';
 * const body = Buffer.from('{"id":"evt_1"}');
 * const header = 't=1700000000,v1=…';
 * try {
 *   verifySignature(body, header, process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 * } catch {
 *   // answer 400
 * }
 */
export function verifySignature(
  rawBody: RawBody,
  header: SignatureHeader,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): number {
  assertRawBody(rawBody);
  const secrets = secretsOf(secret);
  const { timestamp, signatures } = parseSignatureHeader(header, reusedSlot);
  const crypto = nodeCrypto();
  const body = typeof rawBody === 'string' ? rawBody : toBytes(rawBody);
  let matched = false;
  // Every secret against every signature, with no early exit: the time taken does not tell which matched.
  for (const candidate of secrets) {
    const expected = hmac(crypto, candidate, timestamp, body);
    for (const signature of signatures) {
      if (crypto.timingSafeEqual(expected, signature)) matched = true;
    }
  }
  if (!matched) throw signatureMismatch();
  assertWithinTolerance(timestamp, options.tolerance ?? DEFAULT_TOLERANCE_SECONDS, nowSeconds());
  return timestamp;
}

/**
 * Checks a webhook's `X-Service-Signature` against the raw body and returns the body's event, or throws a
 * `SignatureVerificationError` (answer 400 and do nothing). Accepts several secrets, so a rolled secret and
 * the previous one both verify while you switch. Refuses a timestamp more than `tolerance` seconds (300)
 * from now, either way, and compares signatures in constant time. An event of a known type is checked
 * against the contract (read leniently: values and fields added later pass through); an event of a type this
 * SDK version does not know is returned as an `UnknownWebhookEvent`, never thrown. A signed body that is not
 * an event throws a `WebhookPayloadError` (a `SignatureVerificationError`: answer 400).
 *
 * @example
 * import express from 'express';
 * import { constructEvent } from '@servicepay/node';
 * const app = express();
 * app.post('/webhooks/servicepay', express.raw({ type: 'application/json' }), (req, res) => {
 *   const event = constructEvent(req.body, req.headers['x-service-signature'], process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 *   if (event.type === 'session.successful') console.log('paid', event.data.session.reference);
 *   res.sendStatus(204);
 * });
 */
export function constructEvent(
  rawBody: RawBody,
  header: SignatureHeader,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): WebhookEvent {
  verifySignature(rawBody, header, secret, options);
  return parseEvent(rawBody);
}

/**
 * What {@link generateTestHeader} signs.
 *
 * @example
 * import type { GenerateTestHeaderOptions } from '@servicepay/node';
 * const options: GenerateTestHeaderOptions = { payload: '{"id":"evt_1"}', secret: 'whsec_test' };
 */
export interface GenerateTestHeaderOptions {
  /** The exact body your test will send. */
  payload: RawBody;
  /** The signing secret your handler verifies with. */
  secret: string;
  /** Unix seconds to sign with. Default now. */
  timestamp?: number;
}

/**
 * Signs a payload the way the service does, for your own tests of your webhook handler.
 *
 * @example
 * import { generateTestHeader } from '@servicepay/node';
 * const payload = JSON.stringify({ id: 'evt_1', type: 'session.successful' });
 * const header = generateTestHeader({ payload, secret: 'whsec_test' });
 * // send payload with header 'X-Service-Signature: <header>' to your handler
 */
export function generateTestHeader({
  payload,
  secret,
  timestamp = nowSeconds(),
}: GenerateTestHeaderOptions): string {
  assertRawBody(payload);
  secretsOf(secret);
  const body = typeof payload === 'string' ? payload : toBytes(payload);
  return `t=${timestamp},v1=${hmac(nodeCrypto(), secret, timestamp, body).toString('hex')}`;
}

/**
 * What {@link generateTestWebhook} builds and signs: an event (see {@link generateTestEvent}) and the secret
 * your handler verifies with.
 *
 * @example
 * import type { GenerateTestWebhookOptions } from '@servicepay/node';
 * const options: GenerateTestWebhookOptions = { type: 'session.successful', secret: 'whsec_test_secret' };
 */
export type GenerateTestWebhookOptions<T extends WebhookEventType = WebhookEventType> =
  GenerateTestEventOptions<T> & {
    /** The signing secret your handler verifies with. */
    secret: string;
    /** Unix seconds to sign with. Default now. */
    timestamp?: number;
  };

/**
 * A signed test webhook: the request the service would send your handler.
 *
 * @example
 * import { generateTestWebhook, type TestWebhook } from '@servicepay/node';
 * const webhook: TestWebhook = generateTestWebhook({ type: 'session.expired', secret: 'whsec_test_secret' });
 */
export interface TestWebhook<T extends WebhookEventType = WebhookEventType> {
  /** The event, as `constructEvent` will return it. */
  event: TestEvent<T>;
  /** The raw body to send: the event as JSON. */
  payload: string;
  /** The `X-Service-Signature` value for `payload`. */
  header: string;
  /** Both headers to send with `payload`: `content-type` and `x-service-signature`. */
  headers: { 'content-type': 'application/json'; 'x-service-signature': string };
}

/**
 * Builds a webhook event of any known type and signs it the way the service does: the body and the header to
 * send to your handler in a test, with no service running (stripe-node's fixtures plus
 * `generateTestHeaderString`, in one call).
 *
 * @example
 * import { generateTestWebhook } from '@servicepay/node';
 * const { payload, headers, event } = generateTestWebhook({
 *   type: 'session.successful',
 *   session: { reference: 'order-1042' },
 *   secret: 'whsec_test_secret',
 * });
 * await fetch('http://127.0.0.1:3000/webhooks/servicepay', { method: 'POST', headers, body: payload });
 * event.data.session.reference; // 'order-1042'
 */
export function generateTestWebhook<T extends WebhookEventType>(
  options: GenerateTestWebhookOptions<T>,
): TestWebhook<T> {
  const { secret, timestamp, ...eventOptions } = options;
  const event = generateTestEvent(eventOptions as GenerateTestEventOptions<T>);
  const payload = JSON.stringify(event);
  const header = generateTestHeader(
    timestamp === undefined ? { payload, secret } : { payload, secret, timestamp },
  );
  return {
    event,
    payload,
    header,
    headers: { 'content-type': 'application/json', 'x-service-signature': header },
  };
}

/**
 * The webhook helpers as an object: `servicepay.webhooks` on a client, or `new Webhooks()` without a key
 * (verifying needs only the endpoint's secret).
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const verify = (body: Buffer, header: string | undefined) =>
 *   servicepay.webhooks.constructEvent(body, header, process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 */
export class Webhooks {
  /** See {@link constructEvent}. */
  constructEvent(
    rawBody: RawBody,
    header: SignatureHeader,
    secret: string | readonly string[],
    options?: ConstructEventOptions,
  ): WebhookEvent {
    return constructEvent(rawBody, header, secret, options);
  }

  /** See {@link constructEventAsync}. */
  constructEventAsync(
    rawBody: RawBody,
    header: SignatureHeader,
    secret: string | readonly string[],
    options?: ConstructEventOptions,
  ): Promise<WebhookEvent> {
    return constructEventAsync(rawBody, header, secret, options);
  }

  /** See {@link verifySignature}. */
  verifySignature(
    rawBody: RawBody,
    header: SignatureHeader,
    secret: string | readonly string[],
    options?: ConstructEventOptions,
  ): number {
    return verifySignature(rawBody, header, secret, options);
  }

  /** See {@link generateTestHeader}. */
  generateTestHeader(options: GenerateTestHeaderOptions): string {
    return generateTestHeader(options);
  }

  /** See {@link generateTestEvent}. */
  generateTestEvent<T extends WebhookEventType>(options: GenerateTestEventOptions<T>): TestEvent<T> {
    return generateTestEvent(options);
  }

  /** See {@link generateTestWebhook}. */
  generateTestWebhook<T extends WebhookEventType>(options: GenerateTestWebhookOptions<T>): TestWebhook<T> {
    return generateTestWebhook(options);
  }
}
