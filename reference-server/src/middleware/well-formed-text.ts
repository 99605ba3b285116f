import type { RequestHandler } from 'express';
import { HttpError } from '../errors.ts';

/** A UTF-16 surrogate with no partner: JSON can spell one (`"\ud800"`), UTF-8 cannot store it. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Field errors reported at most, so a body full of them does not make a huge answer. */
const MAX_ERRORS = 10;

/** A path longer than this (a body nested thousands deep) is cut, for the same reason. */
const MAX_PATH = 200;

const shown = (path: string): string => (path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path);

/**
 * Refuses a JSON body holding a lone UTF-16 surrogate in any string, key or value, at any depth: 400
 * `validation_failed` with the dotted path of each (up to ten). SQLite stores text as UTF-8, where a lone
 * surrogate cannot exist, so it would be stored as U+FFFD: the merchant's payer name changed without a word.
 * The schemas say the same for the session fields (`wellFormedString` in the contract); this covers every
 * route's body, whatever its schema. The walk is iterative: a body nested 20,000 deep must not overflow the
 * stack.
 *
 * @example
 * app.use(jsonBody(limit), refuseLoneSurrogates);
 */
export const refuseLoneSurrogates: RequestHandler = (req, _res, next) => {
  const body: unknown = req.body;
  if (body === null || typeof body !== 'object') return next();
  const errors: Array<{ path: string; message: string }> = [];
  const pending: Array<{ value: unknown; path: string }> = [{ value: body, path: '' }];
  while (pending.length > 0 && errors.length < MAX_ERRORS) {
    const { value, path } = pending.pop() as { value: unknown; path: string };
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) {
        errors.push({ path: shown(path), message: 'must not contain a lone UTF-16 surrogate' });
      }
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const childPath = path === '' ? key : `${path}.${key}`;
        if (LONE_SURROGATE.test(key)) {
          errors.push({
            path: shown(childPath),
            message: 'the name must not contain a lone UTF-16 surrogate',
          });
        }
        pending.push({ value: child, path: childPath });
      }
    }
  }
  if (errors.length === 0) return next();
  next(
    new HttpError(
      400,
      'validation_failed',
      'The request holds text that is not valid Unicode (a lone UTF-16 surrogate).',
      errors,
    ),
  );
};
