import { z } from 'zod';
import { EnvironmentSchema, PageParamsSchema, TimestampSchema } from './common.ts';

/**
 * What moved a business's money, one entry per movement (`docs/protocol.md`, "Balance transactions and
 * balance"). Money in is positive, money out negative:
 * - `payment` (+): a payer's transfer credited to a session, which turned `successful`;
 * - `refund` (−): a merchant's refund the bank paid back to the payer's account;
 * - `unapplied_credit` (+): a transfer the bank credited that no session could take (it had ended, its account
 *   was closed, another currency or amount);
 * - `unapplied_credit_return` (−): that credit sent back to the payer by the bank;
 * - `transfer_received` (+) and `transfer_return` (−): a transfer the bank returned to the payer as it
 *   arrived (a wrong amount, an account closed at the bank): both recorded at once, so the payer's transfer is
 *   on the books with its id, and nets to nothing.
 *
 * Treat any other string as a movement too: its `amount` says which way the money went.
 */
export const BalanceTransactionTypeSchema = z.enum([
  'payment',
  'refund',
  'unapplied_credit',
  'unapplied_credit_return',
  'transfer_received',
  'transfer_return',
]);
export type BalanceTransactionType = z.infer<typeof BalanceTransactionTypeSchema>;

/** One movement of a business's money, recorded once and never changed (`txn_…`). */
export const BalanceTransactionSchema = z.object({
  id: z.string().regex(/^txn_[0-9A-Za-z]+$/),
  type: BalanceTransactionTypeSchema,
  environment: EnvironmentSchema,
  /** Signed, in the currency's minor unit: positive in, negative out. Never 0. */
  amount: z.number().int(),
  currency: z.string(),
  /** The session the money paid or came back from; null for a credit on an account no session still knew. */
  sessionId: z.string().nullable(),
  /** The merchant's refund (`rfd_…`) for a `refund` entry; null otherwise. */
  refundId: z.string().nullable(),
  /** The bank's id of the payer's transfer the movement belongs to (a refund: the transfer it refunds). */
  transferId: z.string(),
  /** The payer's account as the bank gave it, masked to its last four digits (`******6789`); null if not given. */
  payerAccount: z.string().nullable(),
  createdAt: TimestampSchema,
});
export type BalanceTransaction = z.infer<typeof BalanceTransactionSchema>;

/**
 * Query of `GET /api/balance-transactions`: newest first, each filter narrowing the list. `createdFrom` is
 * inclusive, `createdTo` exclusive (ISO 8601 timestamps).
 */
export const ListBalanceTransactionsParamsSchema = PageParamsSchema.extend({
  environment: EnvironmentSchema.optional(),
  type: BalanceTransactionTypeSchema.optional(),
  sessionId: z.string().min(1).max(64).optional(),
  createdFrom: TimestampSchema.optional(),
  createdTo: TimestampSchema.optional(),
});
export type ListBalanceTransactionsParams = z.input<typeof ListBalanceTransactionsParamsSchema>;

/** Query of `GET /api/balance-transactions/{id}` and `GET /api/balance`. */
export const RetrieveBalanceParamsSchema = z.object({ environment: EnvironmentSchema.optional() });
export type RetrieveBalanceParams = z.input<typeof RetrieveBalanceParamsSchema>;

/**
 * What a business's ledger holds in one currency, in its minor unit: `collected` every movement in,
 * `refunded` merchants' refunds out, `returned` money sent back to payers without a refund (unapplied credits,
 * returned transfers), and `net` = `collected - refunded - returned`: what the bank holds for the business.
 */
export const CurrencyBalanceSchema = z.object({
  currency: z.string(),
  collected: z.number().int(),
  refunded: z.number().int(),
  returned: z.number().int(),
  net: z.number().int(),
});
export type CurrencyBalance = z.infer<typeof CurrencyBalanceSchema>;

/** Answer of `GET /api/balance`: one row per currency the key's environment ever moved, by currency code. */
export const BalanceSchema = z.object({
  environment: EnvironmentSchema,
  currencies: z.array(CurrencyBalanceSchema),
});
export type Balance = z.infer<typeof BalanceSchema>;
