import { z } from 'zod';
import { EnvironmentSchema, PageParamsSchema, TimestampSchema } from './common.ts';

/**
 * Where a refund stands: `pending` (recorded, the bank's answer not in yet), `succeeded` (the payer's account
 * has the money back) or `failed` (the bank refused; nothing moved, and the amount is refundable again).
 */
export const RefundStatusSchema = z.enum(['pending', 'succeeded', 'failed']);
export type RefundStatus = z.infer<typeof RefundStatusSchema>;

/** Why the merchant refunds: for its own records and the payer's bank statement. */
export const RefundReasonSchema = z.enum(['requested_by_customer', 'duplicate', 'fraudulent', 'other']);
export type RefundReason = z.infer<typeof RefundReasonSchema>;

/**
 * Why the bank refused a refund: `payer_account_closed` (the account the payer paid from is closed at the
 * payer's bank), `bank_refused` (any other refusal). Treat any other string as a refusal too.
 */
export const RefundFailureReasonSchema = z.enum(['payer_account_closed', 'bank_refused']);
export type RefundFailureReason = z.infer<typeof RefundFailureReasonSchema>;

/**
 * Body of `POST /api/widget/sessions/{id}/refunds`. `amount` in the session currency's minor unit, at most
 * what is left to refund; left out, it is all that is left.
 */
export const CreateRefundParamsSchema = z.strictObject({
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  reason: RefundReasonSchema.optional(),
});
export type CreateRefundParams = z.infer<typeof CreateRefundParamsSchema>;

/** A merchant's refund of (part of) a successful session, sent back to the account the payer paid from. */
export const RefundSchema = z.object({
  id: z.string().regex(/^rfd_[0-9A-Za-z]+$/),
  sessionId: z.string(),
  environment: EnvironmentSchema,
  amount: z.number().int(),
  currency: z.string(),
  status: RefundStatusSchema,
  reason: RefundReasonSchema.nullable(),
  /** Set when `status` is `failed`. */
  failureReason: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Refund = z.infer<typeof RefundSchema>;

/** Query of `GET /api/widget/sessions/{id}/refunds` and `GET /api/refunds`: newest first. */
export const ListRefundsParamsSchema = PageParamsSchema.extend({
  environment: EnvironmentSchema.optional(),
});
export type ListRefundsParams = z.input<typeof ListRefundsParamsSchema>;
