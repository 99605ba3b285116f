import { SignatureVerificationError } from '../errors.ts';

/** Seconds a webhook's timestamp may differ from now, either way, before it is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** What a raw webhook body may be: exactly the bytes received, as text or bytes. */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** The header every webhook carries (lower-case, as Node gives headers). */
export const SIGNATURE_HEADER = 'x-service-signature';

/** The `X-Service-Signature` value as it arrives: Node gives `string | string[] | undefined`. */
export type SignatureHeader = string | readonly string[] | null | undefined;

/**
 * Options of `constructEvent` and `constructEventAsync`.
 *
 * @example
 * import type { ConstructEventOptions } from '@servicepay/node';
 * const options: ConstructEventOptions = { tolerance: 600 };
 */
export interface ConstructEventOptions {
  /** Seconds the signed timestamp may be older (or newer) than now. Default 300. `Infinity` turns it off. */
  tolerance?: number;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export interface ParsedSignatureHeader {
  timestamp: number;
  /** Every `v1=` value (64 hex digits). */
  signatures: string[];
}

// By tag rather than `instanceof`: bytes made in another realm (a vm context, an iframe, a worker's polyfill)
// are still bytes. A Node `Buffer` is a `Uint8Array`.
const tagOf = (value: unknown): string => Object.prototype.toString.call(value);
export const isUint8Array = (value: unknown): value is Uint8Array => tagOf(value) === '[object Uint8Array]';
export const isArrayBuffer = (value: unknown): value is ArrayBuffer =>
  tagOf(value) === '[object ArrayBuffer]';

/**
 * Refuses anything but the raw body. A parsed object cannot be verified: re-serialising it never gives back
 * the exact bytes that were signed.
 */
export const assertRawBody: (payload: unknown) => asserts payload is RawBody = (payload) => {
  if (typeof payload === 'string' || isUint8Array(payload) || isArrayBuffer(payload)) return;
  const what = payload === null ? 'null' : Array.isArray(payload) ? 'an array' : typeof payload;
  throw new SignatureVerificationError({
    code: 'webhook_payload_not_raw',
    message:
      `constructEvent needs the raw request body (string, Buffer or Uint8Array), got ${what}. ` +
      'A parsed JSON body cannot be verified. Express: express.raw({ type: "application/json" }) on the webhook route; ' +
      'Fastify: a content-type parser with { parseAs: "buffer" }; Next.js route handler: await req.text().',
  });
};

export const secretsOf = (secret: string | readonly string[]): readonly string[] => {
  if (typeof secret === 'string' && secret !== '') return [secret];
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (
    !Array.isArray(secrets) ||
    secrets.length === 0 ||
    secrets.some((s) => typeof s !== 'string' || s === '')
  ) {
    throw new SignatureVerificationError({
      code: 'webhook_secret_missing',
      message: "No signing secret given: pass the endpoint's whsec_… secret (or several while rotating).",
    });
  }
  return secrets;
};

const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const DIGITS = /^\d{1,12}$/;

/** Reads `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; other schemes are ignored so new ones can be added. */
export const parseSignatureHeader = (header: unknown): ParsedSignatureHeader => {
  const value = Array.isArray(header) ? header[0] : header;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  if (typeof value === 'string') {
    // A plain loop: this runs on every webhook, and the header is a handful of short parts.
    for (const raw of value.split(',')) {
      const part = raw.charCodeAt(0) === 32 || raw.charCodeAt(raw.length - 1) === 32 ? raw.trim() : raw;
      if (part.startsWith('v1=')) {
        const item = part.slice(3);
        if (HEX_SIGNATURE.test(item)) signatures.push(item);
      } else if (part.startsWith('t=')) {
        const item = part.slice(2);
        if (DIGITS.test(item)) timestamp = Number(item);
      }
    }
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new SignatureVerificationError({
      code: 'webhook_signature_missing',
      message:
        typeof value === 'string' && value !== ''
          ? 'The X-Service-Signature header has no t= timestamp or no v1= signature.'
          : 'No X-Service-Signature header: pass req.headers["x-service-signature"] exactly as received.',
    });
  }
  return { timestamp, signatures };
};

export const assertWithinTolerance = (timestamp: number, tolerance: number, now: number): void => {
  if (Math.abs(now - timestamp) > tolerance) {
    throw new SignatureVerificationError({
      code: 'webhook_timestamp_out_of_tolerance',
      message: `The webhook's timestamp is ${now - timestamp} s from now, beyond the tolerance of ${tolerance} s (a replay, or a wrong clock).`,
    });
  }
};

export const signatureMismatch = (): SignatureVerificationError =>
  new SignatureVerificationError({
    code: 'webhook_signature_mismatch',
    message:
      "No signature matches: check that the secret is this endpoint's (whsec_…) and that the body reached you unchanged.",
  });
