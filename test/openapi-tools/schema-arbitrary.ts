import fc from 'fast-check';

type Json = Record<string, unknown>;

/** Longest string or array the fuzzer makes where the schema allows more: enough to cross every bound it names. */
const MAX_GENERATED = 48;

const matchesAll = (schema: Json, value: string): boolean => {
  const patterns = [
    schema.pattern,
    ...((schema.allOf as Json[] | undefined) ?? []).map((part) => part.pattern),
  ];
  return patterns.every((pattern) => typeof pattern !== 'string' || new RegExp(pattern, 'u').test(value));
};

function stringArbitrary(schema: Json): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = (schema.maxLength as number | undefined) ?? Number.POSITIVE_INFINITY;
  const pattern =
    (schema.pattern as string | undefined) ??
    ((schema.allOf as Json[] | undefined) ?? []).map((part) => part.pattern as string | undefined).at(-1);
  let base: fc.Arbitrary<string>;
  if (schema.format === 'email') base = fc.emailAddress();
  else if (schema.format === 'date-time')
    base = fc
      .date({
        min: new Date('2000-01-01T00:00:00Z'),
        max: new Date('2099-12-31T23:59:59Z'),
        noInvalidDate: true,
      })
      .map((date) => date.toISOString());
  else if (pattern !== undefined) base = fc.stringMatching(new RegExp(pattern));
  else {
    // Printable text and any code point (controls, astral, unpaired-looking bytes), each half the time.
    const bounds = { minLength, maxLength: Math.min(maxLength, Math.max(minLength, MAX_GENERATED)) };
    base = fc.oneof(fc.string({ unit: 'grapheme', ...bounds }), fc.string({ unit: 'binary', ...bounds }));
  }
  return base.filter((value) => {
    const length = [...value].length;
    return length >= minLength && length <= maxLength && matchesAll(schema, value);
  });
}

function integerArbitrary(schema: Json): fc.Arbitrary<number> {
  const exclusiveMinimum = schema.exclusiveMinimum as number | undefined;
  const min =
    exclusiveMinimum !== undefined ? exclusiveMinimum + 1 : ((schema.minimum as number | undefined) ?? -1e6);
  const max = (schema.maximum as number | undefined) ?? 1e6;
  // Both ends and a small range often (an amount near 0, a limit of 1 or 100), anything between sometimes.
  return fc.oneof(
    fc.constantFrom(min, max),
    fc.integer({ min, max: Math.min(max, min + 10_000) }),
    fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number),
  );
}

/**
 * A fast-check arbitrary of the values a JSON Schema (2020-12, as zod writes it into the OpenAPI document)
 * describes: `$ref` into `components.schemas`, `const`, `enum`, `anyOf`/`oneOf`, objects (required and optional
 * properties, `additionalProperties` maps), arrays, strings (length, `pattern`, `email`, `date-time`), integers,
 * numbers, booleans and null. What it makes validates against the schema; where it could not (an unusual
 * keyword), the test's own validation of the request says so.
 *
 * @example
 * fc.sample(arbitraryOf(document.components.schemas.CreateSessionParams, document.components.schemas), 1);
 */
export function arbitraryOf(schema: Json, definitions: Record<string, Json>): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = definitions[name];
    if (!target) throw new Error(`no schema ${name}`);
    return fc.constant(null).chain(() => arbitraryOf(target, definitions));
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((part) => arbitraryOf(part, definitions)));
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties as Record<string, Json> | undefined) ?? {};
      const required = (schema.required as string[] | undefined) ?? [];
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, part]) => [name, arbitraryOf(part, definitions)]),
        ),
        { requiredKeys: required.filter((name) => name in properties) },
      );
      const additional = schema.additionalProperties;
      if (typeof additional !== 'object' || additional === null) return record;
      const keys = stringArbitrary(
        (schema.propertyNames as Json | undefined) ?? { type: 'string', minLength: 1 },
      );
      return fc
        .tuple(record, fc.dictionary(keys, arbitraryOf(additional as Json, definitions), { maxKeys: 4 }))
        .map(([known, extra]) => ({ ...extra, ...known }));
    }
    case 'array': {
      const minLength = (schema.minItems as number | undefined) ?? 0;
      const maxLength = Math.min((schema.maxItems as number | undefined) ?? 6, 6);
      return fc.array(arbitraryOf((schema.items as Json | undefined) ?? {}, definitions), {
        minLength,
        maxLength: Math.max(minLength, maxLength),
      });
    }
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return integerArbitrary(schema);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
