import { createHmac, timingSafeEqual } from 'node:crypto';
import { ServicePayError } from './errors.ts';
import {
  assertRawBody,
  assertWithinTolerance,
  DEFAULT_TOLERANCE_SECONDS,
  parseSignatureHeader,
  type RawBody,
  secretsOf,
  signatureMismatch,
} from './internal/signature.ts';
import { type WebhookEvent, WebhookEventSchema } from './protocol/index.ts';

export { DEFAULT_TOLERANCE_SECONDS, type RawBody };

/** The header every webhook carries (lower-case, as Node gives headers). */
export const SIGNATURE_HEADER = 'x-service-signature';

/**
 * Options of {@link constructEvent}.
 *
 * @example
 * import type { ConstructEventOptions } from '@servicepay/node';
 * const options: ConstructEventOptions = { tolerance: 600 };
 */
export interface ConstructEventOptions {
  /** Seconds the signed timestamp may be older (or newer) than now. Default 300. `Infinity` turns it off. */
  tolerance?: number;
}

/** The `X-Service-Signature` value as it arrives: Node gives `string | string[] | undefined`. */
export type SignatureHeader = string | readonly string[] | null | undefined;

const toBytes = (payload: RawBody): Uint8Array =>
  typeof payload === 'string'
    ? new TextEncoder().encode(payload)
    : payload instanceof ArrayBuffer
      ? new Uint8Array(payload)
      : payload;

const toText = (payload: RawBody): string => {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return new TextDecoder().decode(toBytes(payload));
};

const parseEvent = (payload: RawBody): WebhookEvent => {
  let json: unknown;
  try {
    json = JSON.parse(toText(payload));
  } catch (cause) {
    throw new ServicePayError({
      code: 'webhook_payload_invalid',
      message: 'The webhook body is not JSON.',
      cause,
    });
  }
  const parsed = WebhookEventSchema.safeParse(json);
  if (!parsed.success) {
    throw new ServicePayError({
      code: 'webhook_payload_invalid',
      message: 'The webhook body is signed but is not an event this SDK version knows.',
      cause: parsed.error,
    });
  }
  return parsed.data;
};

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const hmacHex = (secret: string, timestamp: number, payload: RawBody): Buffer => {
  const hmac = createHmac('sha256', secret).update(`${timestamp}.`);
  hmac.update(typeof payload === 'string' ? payload : toBytes(payload));
  return hmac.digest();
};

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
  const { timestamp, signatures } = parseSignatureHeader(header);
  const bytes = typeof rawBody === 'string' ? rawBody : toBytes(rawBody);
  let matched = false;
  for (const candidate of secrets) {
    const expected = createHmac('sha256', candidate).update(`${timestamp}.`).update(bytes).digest();
    for (const signature of signatures) {
      if (timingSafeEqual(expected, Buffer.from(signature, 'hex'))) matched = true;
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
 * from now, either way, and compares signatures in constant time. The event is checked against the
 * contract's schema (fields added later are dropped).
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

const fromHex = (hex: string): Uint8Array<ArrayBuffer> => {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
};

/**
 * {@link constructEvent} on WebCrypto (`crypto.subtle`) instead of `node:crypto`, for edge runtimes (Vercel
 * Edge, Cloudflare Workers, Deno) where only WebCrypto exists. Same checks, same errors; returns a Promise.
 *
 * @example
 * import { constructEventAsync } from '@servicepay/node';
 * export async function POST(req: Request) {
 *   const event = await constructEventAsync(await req.text(), req.headers.get('x-service-signature'), process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 *   return new Response(null, { status: event ? 204 : 400 });
 * }
 */
export async function constructEventAsync(
  rawBody: RawBody,
  header: SignatureHeader,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<WebhookEvent> {
  assertRawBody(rawBody);
  const secrets = secretsOf(secret);
  const { timestamp, signatures } = parseSignatureHeader(header);
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined)
    throw new Error('constructEventAsync needs WebCrypto (globalThis.crypto.subtle).');
  const encoder = new TextEncoder();
  const prefix = encoder.encode(`${timestamp}.`);
  const body = toBytes(rawBody);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix, 0);
  signed.set(body, prefix.length);
  let matched = false;
  for (const candidate of secrets) {
    const key = await subtle.importKey(
      'raw',
      encoder.encode(candidate),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    for (const signature of signatures) {
      // subtle.verify compares in constant time.
      if (await subtle.verify('HMAC', key, fromHex(signature), signed)) matched = true;
    }
  }
  if (!matched) throw signatureMismatch();
  assertWithinTolerance(timestamp, options.tolerance ?? DEFAULT_TOLERANCE_SECONDS, nowSeconds());
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
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, payload).toString('hex')}`;
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
}
