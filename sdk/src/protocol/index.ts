/**
 * The ServicePay wire contract: zod schemas and their types for every body on the wire.
 * The reference server parses every input with these; the SDK parses every response with them.
 * A change here is a contract change: update `docs/protocol.md` in the same commit.
 *
 * @example
 * import { CreateSessionParamsSchema } from '@servicepay/node/protocol';
 * const params = CreateSessionParamsSchema.parse({ amount: 500000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } });
 */
export * from './bank.ts';
export * from './common.ts';
export * from './keys.ts';
export * from './payment-links.ts';
export * from './push.ts';
export * from './refunds.ts';
export * from './sessions.ts';
export * from './webhooks.ts';
