import { z } from 'zod';

/**
 * A response type as this SDK reads it: every string enum also admits a value a later service version adds
 * (`'successful' | … | (string & {})`, so comparisons with the known values still type-check and complete).
 * Fields a later version adds are kept at run time; they are not in the type.
 */
export type Lenient<T> = T extends string
  ? string extends T
    ? string
    : T | (string & {})
  : T extends readonly (infer Item)[]
    ? Lenient<Item>[]
    : T extends object
      ? { [K in keyof T]: Lenient<T[K]> }
      : T;

/** The part of a zod 4 schema's definition this module reads. */
interface Definition {
  type: string;
  shape?: Record<string, z.ZodType>;
  entries?: Record<string, string | number>;
  values?: readonly unknown[];
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: readonly z.ZodType[];
}

const definitionOf = (schema: z.ZodType): Definition => schema._zod.def as unknown as Definition;

const build = (schema: z.ZodType): z.ZodType => {
  const def = definitionOf(schema);
  switch (def.type) {
    case 'object': {
      const shape: Record<string, z.ZodType> = {};
      for (const [key, field] of Object.entries(def.shape ?? {})) shape[key] = build(field);
      // Loose: fields the service adds later are kept, never a reason to fail.
      return z.looseObject(shape);
    }
    case 'enum':
      return z.union([schema, z.string()]);
    case 'literal':
      return def.values?.every((value) => typeof value === 'string') ? z.union([schema, z.string()]) : schema;
    case 'optional':
      return build(def.innerType as z.ZodType).optional();
    case 'nullable':
      return build(def.innerType as z.ZodType).nullable();
    case 'array':
      return z.array(build(def.element as z.ZodType));
    case 'record':
      return z.record(z.string(), build(def.valueType as z.ZodType));
    case 'union':
      return z.union((def.options ?? []).map(build) as [z.ZodType, z.ZodType, ...z.ZodType[]]);
    // Formats (ids, timestamps, account numbers) and bounds are the service's promise about what it writes;
    // a reader that enforced them would break on a harmless change of format.
    case 'string':
      return z.string();
    case 'number':
      return z.number();
    default:
      return schema;
  }
};

/**
 * The response-reading twin of a contract schema: enums accept values added later, objects keep fields added
 * later, and formats are not enforced. The contract's own schemas stay strict: the server parses its input
 * with them, and the contract tests hold the server's output to them.
 *
 * @example
 * import { SessionSchema } from '@servicepay/node/protocol';
 * const LenientSession = lenient(SessionSchema);
 * LenientSession.parse({ ...session, status: 'refunded', addedLater: 1 }); // passes, keeps addedLater
 */
export const lenient = <S extends z.ZodType>(schema: S): z.ZodType<Lenient<z.output<S>>> =>
  build(schema) as z.ZodType<Lenient<z.output<S>>>;
