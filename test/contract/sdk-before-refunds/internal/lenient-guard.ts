import type { z } from 'zod';

/** The part of a zod 4 schema's definition this module reads (the same as `lenient.ts` reads). */
interface Definition {
  type: string;
  shape?: Record<string, z.ZodType>;
  values?: readonly unknown[];
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: readonly z.ZodType[];
  checks?: readonly unknown[];
}

/** A check of a parsed JSON value, in place: true when the lenient schema would accept it unchanged. */
export type Guard = (value: unknown) => boolean;

const definitionOf = (schema: z.ZodType): Definition => schema._zod.def as unknown as Definition;

const hasOwn = Object.prototype.hasOwnProperty;

// zod's object and record parsers skip or strip an own `__proto__` key, so for such a value the copy zod
// returns would differ from the value itself: the guard says no, and the caller asks zod.
const isPlainRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !hasOwn.call(value, '__proto__');

const isString: Guard = (value) => typeof value === 'string';
// zod 4's number refuses NaN and ±Infinity (JSON has neither, but the guard says what zod says).
const isNumber: Guard = (value) => typeof value === 'number' && Number.isFinite(value);

/**
 * Follows `lenient.ts`'s `build` case by case: what `build` turns into a looser schema, the guard checks with
 * the same looseness. Returns undefined for anything `build` keeps as it is and this module does not model
 * (transforms, defaults, refinements…), so the whole guard is then unavailable and the caller uses zod.
 */
const compile = (schema: z.ZodType): Guard | undefined => {
  const def = definitionOf(schema);
  switch (def.type) {
    case 'object': {
      const keys: string[] = [];
      const guards: Guard[] = [];
      for (const [key, field] of Object.entries(def.shape ?? {})) {
        const guard = compile(field);
        if (guard === undefined) return undefined;
        keys.push(key);
        guards.push(guard);
      }
      // Loose, like `build`'s `z.looseObject`: keys the guard does not know are kept, never checked. Two
      // arrays and an index rather than `[key, guard]` pairs: the destructuring cost a tenth of the guard.
      return (value) => {
        if (!isPlainRecord(value)) return false;
        for (let i = 0; i < keys.length; i++) {
          if (!(guards[i] as Guard)(value[keys[i] as string])) return false;
        }
        return true;
      };
    }
    case 'enum':
      return isString;
    case 'literal':
      return def.values?.every((value) => typeof value === 'string') ? isString : undefined;
    case 'optional': {
      const inner = compile(def.innerType as z.ZodType);
      return inner && ((value) => value === undefined || inner(value));
    }
    case 'nullable': {
      const inner = compile(def.innerType as z.ZodType);
      return inner && ((value) => value === null || inner(value));
    }
    case 'array': {
      const element = compile(def.element as z.ZodType);
      return element && ((value) => Array.isArray(value) && value.every((item) => element(item)));
    }
    case 'record': {
      const item = compile(def.valueType as z.ZodType);
      return (
        item &&
        ((value) => {
          if (!isPlainRecord(value)) return false;
          for (const key in value) if (hasOwn.call(value, key) && !item(value[key])) return false;
          return true;
        })
      );
    }
    case 'union': {
      const options = (def.options ?? []).map(compile);
      if (options.some((option) => option === undefined)) return undefined;
      const guards = options as Guard[];
      return (value) => guards.some((guard) => guard(value));
    }
    case 'string':
      return isString;
    case 'number':
      return isNumber;
    case 'boolean':
      return def.checks === undefined || def.checks.length === 0
        ? (value) => typeof value === 'boolean'
        : undefined;
    case 'null':
      return (value) => value === null;
    default:
      return undefined;
  }
};

/**
 * A fast yes/no twin of `lenient(schema)` for parsed JSON, checked in place without copying: when it says
 * yes, `lenient(schema).parse(value)` succeeds and returns a value deep-equal to `value`; when it says no (or
 * the schema holds something it does not model, and it is undefined), ask zod, which gives the same answer and
 * the error it always gave. Webhook verification runs it on every event, where zod's copy cost as much as the
 * HMAC (issue 12).
 *
 * @example
 * import { SessionSchema } from '@servicepay/node/protocol';
 * import { lenient } from './lenient.ts';
 * const body = '{"id":"ses_1"}';
 * const isSession = lenientGuard(SessionSchema);
 * const session = JSON.parse(body);
 * const read = isSession?.(session) ? session : lenient(SessionSchema).parse(session);
 */
export const lenientGuard = (schema: z.ZodType): Guard | undefined => compile(schema);
