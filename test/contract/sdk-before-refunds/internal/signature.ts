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
  /** Every valid `v1=` value (64 hex digits), decoded to its 32 bytes, in the header's order. */
  signatures: Uint8Array<ArrayBuffer>[];
}

// By tag rather than `instanceof`: bytes made in another realm (a vm context, an iframe, a worker's polyfill)
// are still bytes. A Node `Buffer` is a `Uint8Array`.
const tagOf = (value: unknown): string => Object.prototype.toString.call(value);
// `instanceof` first: it answers for this realm's bytes (every Buffer) without building a tag string.
export const isUint8Array = (value: unknown): value is Uint8Array =>
  value instanceof Uint8Array || tagOf(value) === '[object Uint8Array]';
export const isArrayBuffer = (value: unknown): value is ArrayBuffer =>
  value instanceof ArrayBuffer || tagOf(value) === '[object ArrayBuffer]';

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

const SIGNATURE_HEX_LENGTH = 64;
const MAX_TIMESTAMP_DIGITS = 12;

/** Each ASCII code's hex value (either case), -1 for a code that is not a hex digit. */
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) {
  HEX_VALUES['0123456789abcdef'.charCodeAt(digit)] = digit;
  HEX_VALUES['0123456789ABCDEF'.charCodeAt(digit)] = digit;
}

/** The value of one hex digit (either case), or -1: a table read, as this runs 64 times per signature. */
const hexValue = (code: number): number => (code < 128 ? (HEX_VALUES[code] as number) : -1);

/** The byte length of a `v1=` signature (HMAC-SHA256). */
export const SIGNATURE_BYTES = SIGNATURE_HEX_LENGTH / 2;

/** The 32 bytes the `index`-th valid signature of a header is decoded into. */
export type SignatureSlot = (index: number) => Uint8Array<ArrayBuffer>;

/** A new array for each signature: for callers that keep the signatures past their own turn (`await`). */
const newSignatureSlot: SignatureSlot = () => new Uint8Array(SIGNATURE_BYTES);

/**
 * Writes `text[from, to)` into `target` and says whether it was exactly 64 hex digits (if not, `target` holds
 * garbage and is not used). Checked and decoded in one pass over the header itself: decoding later from a
 * slice of it read every digit again through the slice, which cost as much as the rest of the header's reading
 * (issue 12).
 */
const decodeSignature = (text: string, from: number, to: number, target: Uint8Array): boolean => {
  if (to - from !== SIGNATURE_HEX_LENGTH) return false;
  let invalid = 0;
  for (let i = 0; i < SIGNATURE_BYTES; i++) {
    const high = hexValue(text.charCodeAt(from + 2 * i));
    const low = hexValue(text.charCodeAt(from + 2 * i + 1));
    invalid |= high | low; // negative once any digit was not hex
    target[i] = (high << 4) | low;
  }
  return invalid >= 0;
};

/** `text[from, to)` as a number if it is 1 to 12 decimal digits, else undefined. */
const decodeTimestamp = (text: string, from: number, to: number): number | undefined => {
  if (to <= from || to - from > MAX_TIMESTAMP_DIGITS) return undefined;
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit; // at most 12 digits: exact in a double
  }
  return value;
};

/**
 * Reads `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; other schemes are ignored so new ones can be added. A part
 * with a space at either end is trimmed; the last valid `t=` counts; every valid `v1=` is kept.
 */
export const parseSignatureHeader = (
  header: unknown,
  slot: SignatureSlot = newSignatureSlot,
): ParsedSignatureHeader => {
  const value = Array.isArray(header) ? header[0] : header;
  let timestamp: number | undefined;
  const signatures: Uint8Array<ArrayBuffer>[] = [];
  if (typeof value === 'string') {
    // Indices into the header rather than split, regexes and slices: this runs on every webhook.
    let start = 0;
    while (start <= value.length) {
      let end = value.indexOf(',', start);
      if (end === -1) end = value.length;
      let text = value;
      let from = start;
      let to = end;
      if (value.charCodeAt(start) === 32 || value.charCodeAt(end - 1) === 32) {
        text = value.slice(start, end).trim();
        from = 0;
        to = text.length;
      }
      if (text.startsWith('v1=', from)) {
        const target = slot(signatures.length);
        if (decodeSignature(text, from + 3, to, target)) signatures.push(target);
      } else if (text.startsWith('t=', from)) {
        const seconds = decodeTimestamp(text, from + 2, to);
        if (seconds !== undefined) timestamp = seconds;
      }
      start = end + 1;
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
