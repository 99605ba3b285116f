import { hash } from 'node:crypto';
import type { Request, Response } from 'express';
import { callerOf } from './request-context.ts';

// How an idempotent request is known again: the scope its key is kept in and the hash of the request (method,
// path and body, the body in canonical JSON) stored beside its answer. A retry is the same request when its
// hash is; a change here makes every remembered answer a stranger to its retry, so the hash must not drift.

/**
 * The hash stored with a key's answer: SHA-256 of the method, the URL as sent and the body in canonical JSON.
 *
 * @example
 * if (!earlier.requestHash.equals(requestHashOf(req))) throw reused;
 */
export function requestHashOf(req: Request): Buffer {
  // One-shot hash, not a Hash object per request (the same digest).
  return hash('sha256', `${req.method} ${req.originalUrl}\n${canonicalJson(req.body ?? {})}`, 'buffer');
}

/**
 * The scope a key is kept in: the business and environment of an API key, the session of a widget token. The
 * same key sent by two callers is two keys.
 *
 * @example
 * const lockKey = `${scopeOf(res)}\n${key}`;
 */
export function scopeOf(res: Response): string {
  const caller = callerOf(res);
  if (!caller) throw new Error('idempotent runs after authentication');
  if (caller.kind === 'widget') return `session:${caller.session.id}`;
  return `${caller.business.id}:${caller.environment}`;
}

/**
 * JSON with object keys sorted, so "the same body" means the same values: a client that serialises its retry
 * with the keys in another order is still retrying, not sending a new request. Written out rather than as a
 * `JSON.stringify` replacer that rebuilds every object sorted: on every keyed POST, that cost twice as much.
 * The body is what `JSON.parse` made (or `{}`), so it holds only JSON values: no `undefined`, function or
 * `toJSON`.
 *
 * @example
 * canonicalJson({ b: 1, a: [2] }); // '{"a":[2],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += `${i === 0 ? '' : ','}${canonicalJson(value[i])}`;
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  // The order keys were hashed in before, and must stay (a retry across an upgrade is still the same request):
  // that replacer rebuilt each object from its sorted keys, and an object lists array-index keys ("2", "10")
  // first, ascending, whatever order they were added in. `Object.keys` already puts those first; the rest are
  // sorted by UTF-16 code units, as the replacer's comparison did.
  let indexKeys = 0;
  while (indexKeys < keys.length && isArrayIndex(keys[indexKeys] as string)) indexKeys++;
  if (indexKeys === 0) keys.sort();
  else keys.splice(indexKeys, keys.length - indexKeys, ...keys.slice(indexKeys).sort());
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    text += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(record[key])}`;
  }
  return `${text}}`;
}

/** Whether `key` is an array index ("0" to "4294967294" in canonical form), which objects list first. */
const isArrayIndex = (key: string): boolean => {
  const code = key.charCodeAt(0);
  if (!(code >= 48 && code <= 57)) return false;
  const index = Number(key);
  return index < 4_294_967_295 && String(index) === key;
};
