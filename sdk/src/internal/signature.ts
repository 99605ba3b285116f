import { SignatureVerificationError } from '../errors.ts';

/** Seconds a webhook's timestamp may differ from now, either way, before it is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** What a raw webhook body may be: exactly the bytes received, as text or bytes. */
export type RawBody = string | Uint8Array | ArrayBuffer;

export interface ParsedSignatureHeader {
  timestamp: number;
  /** Every `v1=` value, lower-cased hex. */
  signatures: string[];
}

/**
 * Refuses anything but the raw body. A parsed object cannot be verified: re-serialising it never gives back
 * the exact bytes that were signed.
 */
export const assertRawBody: (payload: unknown) => asserts payload is RawBody = (payload) => {
  if (typeof payload === 'string' || payload instanceof Uint8Array || payload instanceof ArrayBuffer) return;
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

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;

/** Reads `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; other schemes are ignored so new ones can be added. */
export const parseSignatureHeader = (header: unknown): ParsedSignatureHeader => {
  const value = Array.isArray(header) ? header[0] : header;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  if (typeof value === 'string') {
    for (const part of value.split(',')) {
      const index = part.indexOf('=');
      if (index < 0) continue;
      const key = part.slice(0, index).trim();
      const item = part.slice(index + 1).trim();
      if (key === 't' && /^\d{1,12}$/.test(item)) timestamp = Number(item);
      else if (key === 'v1' && HEX_SIGNATURE.test(item.toLowerCase())) signatures.push(item.toLowerCase());
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
