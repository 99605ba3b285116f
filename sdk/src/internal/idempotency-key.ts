import { v7 as uuidv7 } from 'uuid';

/**
 * The `Idempotency-Key` a POST gets when the caller gives none: a UUIDv7 (RFC 9562), 48 bits of the time in
 * milliseconds, then 74 random bits. The service keeps every key it is sent for 24 hours in a unique index, by
 * business and key; keys that start with the time are appended to that index, where random ones (UUIDv4) write
 * a page of their own anywhere in it on every create. Measured on the service: 12 % fewer keyed creates per
 * second with UUIDv4 keys than with time-ordered ones (docs/decisions/api-performance.md, "Idempotency keys sort by time").
 * Unique without coordination like a v4: two keys of the same millisecond differ in 74 random bits.
 *
 * @example
 * headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey(); // '019ac4f2-…'
 */
export function newIdempotencyKey(): string {
  return uuidv7();
}
