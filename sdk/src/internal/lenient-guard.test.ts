import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { event, session } from '../../test-support/fixtures.ts';
import { SessionSchema, WebhookEventSchema } from '../protocol/index.ts';
import { lenient } from './lenient.ts';
import { lenientGuard } from './lenient-guard.ts';

const at = '2025-01-01T12:00:00.000Z';

/** Events of every shape the service sends: with and without an account, a mismatch, a credit. */
const samples = (): unknown[] => [
  event(),
  event({
    type: 'session.mismatch',
    data: {
      session: session({
        status: 'mismatch',
        payer: { name: 'Ada', email: 'ada@example.com', phone: '+2348012345678' },
        metadata: { orderId: '1', cart: 'c_1' },
        virtualAccount: { bankName: 'Bank', accountNumber: '0123456789', accountName: 'Shop', expiresAt: at },
        lastMismatch: { expectedAmount: 500_000, receivedAmount: 400_000 },
      }),
    },
  }),
  event({
    type: 'session.credit_unapplied',
    data: {
      session: session({ status: 'expired' }),
      credit: {
        id: 'crd_1',
        transferId: 'trf_1',
        accountNumber: '0123456789',
        amount: 1,
        currency: 'NGN',
        reason: 'session_ended',
        refundStatus: 'refunded',
        refundId: null,
        createdAt: at,
      },
    },
  }),
];

/** Values put in place of a field, or of a whole object, to see both readers judge them. */
const replacements: unknown[] = [
  undefined,
  null,
  0,
  1.5,
  -1,
  '',
  'text',
  'a value added later',
  true,
  [],
  ['x'],
  {},
  { added: 1 },
];

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Every path to a value inside `value` (objects and arrays), the root excluded. */
const pathsOf = (value: unknown, prefix: (string | number)[] = []): (string | number)[][] => {
  if (typeof value !== 'object' || value === null) return [];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((key) => {
    const path = [...prefix, key];
    return [path, ...pathsOf((value as Record<string | number, unknown>)[key], path)];
  });
};

/** `value` with the field at `path` set to `replacement` (deleted for undefined), as JSON would carry it. */
const withValue = (value: unknown, path: (string | number)[], replacement: unknown): unknown => {
  const copy = clone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (replacement === undefined) delete parent[last];
  else parent[last] = clone(replacement);
  return copy;
};

/** Each sample, each field replaced by each replacement, plus the whole value replaced. */
const mutations = (): unknown[] =>
  samples().flatMap((sample) => [
    sample,
    ...replacements,
    ...pathsOf(sample).flatMap((path) => replacements.map((r) => withValue(sample, path, r))),
  ]);

const agreesWithZod = (schema: z.ZodType, values: unknown[]) => {
  const guard = lenientGuard(schema);
  expect(guard).toBeTypeOf('function');
  const reader = lenient(schema);
  let accepted = 0;
  for (const value of values) {
    const parsed = reader.safeParse(value);
    expect({ value, accepted: guard?.(value) }).toEqual({ value, accepted: parsed.success });
    if (parsed.success) {
      accepted++;
      // What the caller returns in place of zod's copy: the same content.
      expect(value).toEqual(parsed.data);
    }
  }
  return accepted;
};

describe('lenientGuard', () => {
  it('accepts exactly what the lenient event reader accepts, over every field of every event kind replaced', () => {
    const values = mutations();
    expect(values.length).toBeGreaterThan(1000);
    const accepted = agreesWithZod(WebhookEventSchema, values);
    // Both answers occur: new enum values, added fields and absent optionals pass; wrong types do not.
    expect(accepted).toBeGreaterThan(50);
    expect(accepted).toBeLessThan(values.length - 500);
  });

  it('accepts exactly what the lenient session reader accepts', () => {
    const sessions = samples().map((sample) => (sample as { data: { session: unknown } }).data.session);
    agreesWithZod(
      SessionSchema,
      sessions.flatMap((s) => pathsOf(s).flatMap((path) => replacements.map((r) => withValue(s, path, r)))),
    );
  });

  it('leaves a value with an own __proto__ key to zod, which drops that key', () => {
    const body = JSON.stringify(event()).replace('"metadata":{}', '"metadata":{"__proto__":"x"}');
    const value: unknown = JSON.parse(body);
    expect(lenientGuard(WebhookEventSchema)?.(value)).toBe(false);
    const parsed = lenient(WebhookEventSchema).parse(value) as { data: { session: { metadata: object } } };
    expect(Object.hasOwn(parsed.data.session.metadata, '__proto__')).toBe(false);
  });

  it('is unavailable for a schema holding what it does not model, so the caller uses zod', () => {
    expect(lenientGuard(z.object({ at: z.string().transform((s) => s.length) }))).toBeUndefined();
    expect(lenientGuard(z.object({ n: z.number().default(1) }))).toBeUndefined();
    expect(lenientGuard(z.object({ n: z.literal(1) }))).toBeUndefined();
  });
});
