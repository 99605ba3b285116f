import { createHash } from 'node:crypto';
import {
  CreatePaymentLinkParamsSchema,
  ListPaymentLinksParamsSchema,
  PaymentLinkSchema,
  UpdatePaymentLinkParamsSchema,
} from '@servicepay/node/protocol';
import { paymentLinkQrSvg } from '../payment-links/payment-link-qr.ts';
import { defineOperation, json } from './operation.ts';

/**
 * The merchant's API for payment links (secret key): create, list, retrieve, update, and each link's QR code.
 *
 * @example
 * mountOperations(app, PAYMENT_LINK_OPERATIONS, deps); // as createApp mounts every table
 */
export const PAYMENT_LINK_OPERATIONS = [
  defineOperation({
    method: 'post',
    path: '/api/payment-links',
    operationId: 'createPaymentLink',
    tag: 'PaymentLinks',
    summary: 'Create a payment link',
    description:
      "A page on the widget host of the key's environment (`url`) where each payer types a name and an email and pays `amount` (minor units) of `currency`. `reusable: false` closes the link after its first successful payment. Every session made through it names it (`paymentLink`).",
    auth: 'secretKey',
    body: {
      schema: CreatePaymentLinkParamsSchema,
      name: 'CreatePaymentLinkParams',
      required: true,
      what: 'payment link',
      absent: 'as-sent',
    },
    idempotency: 'replay',
    success: { 201: json('The payment link.', PaymentLinkSchema, 'PaymentLink') },
    errors: [],
    handler: async ({ caller, body }, { paymentLinks }) => ({
      status: 201,
      data: await paymentLinks.create(caller, body),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/payment-links',
    operationId: 'listPaymentLinks',
    tag: 'PaymentLinks',
    summary: "List the key's environment's payment links, newest first",
    auth: 'secretKey',
    query: ListPaymentLinksParamsSchema,
    success: { 200: json('A page of payment links.', PaymentLinkSchema, 'PaymentLink', true) },
    errors: [],
    handler: async ({ caller, query }, { paymentLinks }) => ({
      page: await paymentLinks.list(caller, query),
    }),
  }),
  defineOperation({
    method: 'get',
    path: '/api/payment-links/{id}',
    operationId: 'retrievePaymentLink',
    tag: 'PaymentLinks',
    summary: 'Retrieve a payment link',
    auth: 'secretKey',
    success: { 200: json('The payment link.', PaymentLinkSchema, 'PaymentLink') },
    errors: [404],
    handler: async ({ caller, params }, { paymentLinks }) => ({
      data: await paymentLinks.retrieve(caller, params.id),
    }),
  }),
  defineOperation({
    method: 'patch',
    path: '/api/payment-links/{id}',
    operationId: 'updatePaymentLink',
    tag: 'PaymentLinks',
    summary: 'Rename a payment link, or turn it off (or on again)',
    description:
      "An inactive link's page answers 410. A one-time link that was paid stays closed: `active: true` answers 409 `payment_link_completed`.",
    auth: 'secretKey',
    body: {
      schema: UpdatePaymentLinkParamsSchema,
      name: 'UpdatePaymentLinkParams',
      required: true,
      what: 'payment link',
      absent: 'as-sent',
    },
    idempotency: 'replay',
    success: { 200: json('The payment link as it is now.', PaymentLinkSchema, 'PaymentLink') },
    errors: [404, 409],
    handler: async ({ caller, params, body }, { paymentLinks }) => ({
      data: await paymentLinks.update(caller, params.id, body),
    }),
  }),
  // An image, not the envelope: what a portal `<img>`, a printer or a chat app takes as it is.
  defineOperation({
    method: 'get',
    path: '/api/payment-links/{id}/qr.svg',
    operationId: 'paymentLinkQrCode',
    tag: 'PaymentLinks',
    summary: "The QR code of a payment link's url (SVG)",
    auth: 'secretKey',
    success: { 200: { kind: 'svg', description: "An SVG image of the QR code of the link's `url`." } },
    errors: [404],
    handler: async ({ caller, params, res }, { paymentLinks }) => {
      const link = await paymentLinks.retrieve(caller, params.id);
      const svg = await paymentLinkQrSvg(link.url);
      res.status(200);
      res.setHeader('Content-Type', 'image/svg+xml; charset=utf-8');
      res.setHeader('Cache-Control', 'private, max-age=300');
      res.setHeader('ETag', `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`);
      res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
      res.end(svg);
      return undefined;
    },
  }),
];
