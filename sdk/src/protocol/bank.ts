import { z } from 'zod';
import { TimestampSchema } from './common.ts';
import { SessionSchema, VirtualAccountSchema } from './sessions.ts';

/**
 * What the bank did with a transfer to a virtual account. The account is amount-controlled at the bank:
 * only the exact amount is credited; anything else, and anything sent to a closed account, is returned.
 */
export const TransferOutcomeSchema = z.enum(['credited', 'returned']);
export type TransferOutcome = z.infer<typeof TransferOutcomeSchema>;

export const ReturnReasonSchema = z.enum(['amount_mismatch', 'account_closed']);
export type ReturnReason = z.infer<typeof ReturnReasonSchema>;

/**
 * Body of `POST /bank/notifications` (bank → service), signed with `X-Bank-Signature`.
 * `id` is the bank's notification id; the service processes each id once.
 */
export const BankNotificationSchema = z.object({
  id: z.string().regex(/^ntf_[0-9A-Za-z]+$/),
  type: z.literal('transfer.received'),
  occurredAt: TimestampSchema,
  transfer: z.object({
    id: z.string().regex(/^trf_[0-9A-Za-z]+$/),
    accountNumber: z.string().regex(/^\d{10}$/),
    amount: z.number().int().positive(),
    currency: z.string().regex(/^[A-Z]{3}$/),
    outcome: TransferOutcomeSchema,
    returnReason: ReturnReasonSchema.nullable(),
    /**
     * The payer's account the money came from. Absent from notifications a bank queued before it sent it: the
     * ledger then records no payer account for that transfer.
     */
    payerAccount: z
      .string()
      .regex(/^\d{10}$/)
      .optional(),
  }),
});
export type BankNotification = z.infer<typeof BankNotificationSchema>;

/** The payer's account a simulated transfer comes from when none is named. */
export const DEFAULT_TEST_PAYER_ACCOUNT = '0000000001';

/**
 * A payer's account the simulated bank treats as closed at the payer's bank: a transfer from it is credited
 * as any other, but a refund of it is refused (`payer_account_closed`). Test mode's way to see a failed refund.
 */
export const CLOSED_TEST_PAYER_ACCOUNT = '0000000404';

/**
 * Body of `POST /api/test/transfers` (secret test key) and of the simulated bank's `POST /bank/transfers`.
 * `payerAccount` is the account the money comes from (refunds go back to it): `DEFAULT_TEST_PAYER_ACCOUNT`
 * when left out, `CLOSED_TEST_PAYER_ACCOUNT` to have its refunds refused.
 */
export const SimulateTransferParamsSchema = z.strictObject({
  accountNumber: z.string().regex(/^\d{10}$/, 'accountNumber is 10 digits'),
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  payerAccount: z
    .string()
    .regex(/^\d{10}$/, 'payerAccount is 10 digits')
    .optional(),
});
export type SimulateTransferParams = z.infer<typeof SimulateTransferParamsSchema>;

/** A transfer as the simulated bank reports it back to whoever made it. */
export const SimulatedTransferSchema = z.object({
  id: z.string(),
  accountNumber: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  /** The payer's account the money came from (absent from servers older than refunds). */
  payerAccount: z.string().optional(),
  outcome: TransferOutcomeSchema,
  returnReason: ReturnReasonSchema.nullable(),
  /** `delivered` once the service acknowledged the bank's notification; `queued` while the bank still retries. */
  notification: z.enum(['delivered', 'queued']),
  createdAt: TimestampSchema,
});
export type SimulatedTransfer = z.infer<typeof SimulatedTransferSchema>;

/**
 * Answer of `POST /api/test/sessions/{id}/account` (secret test key): the session, now awaiting payment, and
 * the virtual account a payer would transfer to. What the checkout's bootstrap does for a session whose client
 * secret was never used (marks it used, provisions the first account), without the widget; for a session
 * already open, its current account (or a fresh one if the last ran out).
 */
export const TestAccountSchema = z.object({
  session: SessionSchema,
  virtualAccount: VirtualAccountSchema,
});
export type TestAccount = z.infer<typeof TestAccountSchema>;
