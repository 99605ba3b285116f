import { z } from 'zod';
import { EnvironmentSchema, PageParamsSchema, TimestampSchema } from './common.ts';
import { MetadataSchema, RedirectUrlSchema, wellFormedString } from './sessions.ts';

/**
 * Body of `POST /api/payment-links`: a page payers open to pay `amount` (minor units) of `currency` to the
 * business. `reusable` (default true): false closes the link after its first successful payment.
 * `successUrl` is where each payer is sent after paying (`{SESSION_ID}` filled in); without it, a page of
 * the service says the payment went through.
 */
export const CreatePaymentLinkParamsSchema = z.strictObject({
  name: wellFormedString().trim().min(1).max(120),
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[A-Z]{3}$/, 'currency is an upper-case ISO 4217 code'),
  reusable: z.boolean().default(true),
  successUrl: RedirectUrlSchema.optional(),
  metadata: MetadataSchema.optional(),
});
export type CreatePaymentLinkParams = z.input<typeof CreatePaymentLinkParamsSchema>;

/** Body of `PATCH /api/payment-links/{id}`: rename it, or turn it off (`active: false`) and on again. */
export const UpdatePaymentLinkParamsSchema = z
  .strictObject({
    name: wellFormedString().trim().min(1).max(120).optional(),
    active: z.boolean().optional(),
  })
  .refine((value) => value.name !== undefined || value.active !== undefined, 'name or active is required');
export type UpdatePaymentLinkParams = z.infer<typeof UpdatePaymentLinkParamsSchema>;

/**
 * A payment link (`pl_…`): its `url` is a page on the widget host of its environment where a payer types a
 * name and an email and pays. `active` is false once the merchant deactivated it or, for a link that is not
 * `reusable`, once it was paid (`completedAt`); an inactive link's page answers 410.
 */
export const PaymentLinkSchema = z.object({
  id: z.string().regex(/^pl_[0-9A-Za-z]+$/),
  name: z.string(),
  environment: EnvironmentSchema,
  amount: z.number().int(),
  currency: z.string(),
  reusable: z.boolean(),
  active: z.boolean(),
  url: z.string(),
  successUrl: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  /** When a link that is not reusable was paid (and so closed); null otherwise. */
  completedAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type PaymentLink = z.infer<typeof PaymentLinkSchema>;

/** Query of `GET /api/payment-links`: newest first. */
export const ListPaymentLinksParamsSchema = PageParamsSchema.extend({
  environment: EnvironmentSchema.optional(),
  active: z.enum(['true', 'false']).optional(),
});
export type ListPaymentLinksParams = z.input<typeof ListPaymentLinksParamsSchema>;
