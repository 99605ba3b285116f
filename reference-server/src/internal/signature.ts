import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature scheme shared by the bank's notifications (`X-Bank-Signature`) and the service's webhooks
 * (`X-Service-Signature`): `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, with one `v1=`
 * per secret while a secret rotates.
 */
export function signPayload(
  payload: string | Buffer,
  secrets: readonly string[],
  timestampSeconds: number,
): string {
  const signed = signedContent(payload, timestampSeconds);
  const signatures = secrets.map(
    (secret) => `v1=${createHmac('sha256', secret).update(signed).digest('hex')}`,
  );
  return [`t=${timestampSeconds}`, ...signatures].join(',');
}

export type SignatureCheck = { ok: true } | { ok: false; reason: 'malformed' | 'stale' | 'mismatch' };

/**
 * Checks a signature header against the raw body before anything reads the body.
 * `toleranceSeconds` bounds the clock difference both ways, so a captured request cannot be replayed later.
 */
export function verifySignature(
  payload: Buffer,
  header: string | undefined,
  secret: string,
  nowSeconds: number,
  toleranceSeconds: number,
): SignatureCheck {
  if (!header || header.length > 2048) return { ok: false, reason: 'malformed' };
  let timestamp: number | undefined;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) candidates.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || candidates.length === 0) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: 'stale' };
  const expected = createHmac('sha256', secret).update(signedContent(payload, timestamp)).digest();
  // Check every candidate so the time taken does not tell which one matched.
  let matched = false;
  for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  return matched ? { ok: true } : { ok: false, reason: 'mismatch' };
}

function signedContent(payload: string | Buffer, timestampSeconds: number): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([Buffer.from(`${timestampSeconds}.`), body]);
}
