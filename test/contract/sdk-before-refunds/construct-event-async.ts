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
  type SignatureHeader,
  secretsOf,
  signatureMismatch,
} from './internal/signature.ts';
import type { WebhookEvent } from './responses.ts';

// This module runs on Web Crypto and TextEncoder alone: no `node:crypto`, no `Buffer`, no `process`. It is the
// `@servicepay/node/webhooks` entry's code, for edge runtimes (Vercel Edge, Cloudflare Workers, Deno).

const encoder = new TextEncoder();

/**
 * {@link constructEventAsync} without reading the body: checks `X-Service-Signature` with Web Crypto and
 * returns the signed timestamp (unix seconds), or throws a `SignatureVerificationError`.
 *
 * @example
 * import { verifySignatureAsync } from '@servicepay/node/webhooks';
 * export async function POST(req: Request) {
 *   await verifySignatureAsync(await req.text(), req.headers.get('x-service-signature'), process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 *   return new Response(null, { status: 204 });
 * }
 */
export async function verifySignatureAsync(
  rawBody: RawBody,
  header: SignatureHeader,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<number> {
  assertRawBody(rawBody);
  const secrets = secretsOf(secret);
  const { timestamp, signatures } = parseSignatureHeader(header);
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) {
    throw new ServicePayError({
      code: 'webhook_crypto_unavailable',
      message: 'constructEventAsync needs Web Crypto (globalThis.crypto.subtle), which this runtime lacks.',
    });
  }
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
      if (await subtle.verify('HMAC', key, signature, signed)) matched = true;
    }
  }
  if (!matched) throw signatureMismatch();
  assertWithinTolerance(timestamp, options.tolerance ?? DEFAULT_TOLERANCE_SECONDS, nowSeconds());
  return timestamp;
}

/**
 * `constructEvent` on Web Crypto (`crypto.subtle`) alone, for edge runtimes where `node:crypto` and `Buffer`
 * do not exist: the same checks, the same errors, the same events (an unknown type returned, never thrown);
 * returns a Promise. Import it from `@servicepay/node/webhooks` to load nothing of Node's.
 *
 * @example
 * import { constructEventAsync, SignatureVerificationError } from '@servicepay/node/webhooks';
 * export async function POST(req: Request) {
 *   try {
 *     const event = await constructEventAsync(await req.text(), req.headers.get('x-service-signature'), process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 *     if (event.type === 'session.successful') console.log('paid', event.data.session.reference);
 *     return new Response(null, { status: 204 });
 *   } catch (error) {
 *     if (error instanceof SignatureVerificationError) return new Response(error.code, { status: 400 });
 *     throw error;
 *   }
 * }
 */
export async function constructEventAsync(
  rawBody: RawBody,
  header: SignatureHeader,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Promise<WebhookEvent> {
  await verifySignatureAsync(rawBody, header, secret, options);
  return parseEvent(rawBody);
}
