import {
  BankNotificationSchema,
  SimulatedTransferSchema,
  SimulateTransferParamsSchema,
} from '@servicepay/node/protocol';
import { z } from 'zod';
import { type SimulatedBank, UnknownAccountError } from '../bank/simulated-bank.ts';
import type { NotificationResult } from '../db/bank-notifications.ts';
import { notFound } from '../domain-errors.ts';
import { HttpError } from '../errors.ts';
import { type BodySpec, defineOperation, json } from './operation.ts';

/** Makes a transfer at the simulated bank, mapping the bank's refusal to 404. */
export async function transferAtBank(
  bank: SimulatedBank,
  accountNumber: string,
  amount: number,
  payerAccount?: string,
) {
  try {
    return await bank.transfer(accountNumber, amount, payerAccount);
  } catch (error) {
    if (error instanceof UnknownAccountError) throw notFound('account');
    throw error;
  }
}

/** A simulated payer's transfer: the body of the bank's counter and of the test helper that calls it. */
export const transferBody: BodySpec<typeof SimulateTransferParamsSchema> = {
  schema: SimulateTransferParamsSchema,
  name: 'SimulateTransferParams',
  required: true,
  what: 'transfer',
  absent: 'as-sent',
};

/**
 * `data` of `POST /bank/notifications`: what the service made of the bank's notice.
 *
 * @example
 * BankNotificationResultSchema.parse({ id: 'ntf_1', result: 'credited', duplicate: false });
 */
export const BankNotificationResultSchema = z.object({
  id: z.string(),
  result: z.enum([
    'credited',
    'mismatch',
    'not_credited',
    'unapplied',
    'unknown_account',
  ] as const satisfies readonly NotificationResult[]),
  duplicate: z.boolean(),
});

/**
 * The simulated partner bank: its signed notice of a transfer (`bankSignature`: the signature and its timestamp
 * are checked on the raw bytes before the body is parsed, so these are mounted before the JSON parser), and its
 * payer counter for test accounts (what `servicepay-server transfer` calls), served when the configuration
 * opens it.
 *
 * @example
 * mountOperations(app, BANK_OPERATIONS, deps); // as createApp mounts every table
 */
export const BANK_OPERATIONS = [
  defineOperation({
    method: 'post',
    path: '/bank/notifications',
    operationId: 'bankNotification',
    tag: 'Bank',
    summary: "The bank's signed notice of a transfer",
    description:
      'Signed `X-Bank-Signature: t=<unix>,v1=<hex HMAC-SHA256>` over the raw body; each id processed once.',
    auth: 'bankSignature',
    readsOwnBody: true,
    body: {
      schema: BankNotificationSchema,
      name: 'BankNotification',
      required: true,
      what: 'bank notification',
      absent: 'as-sent',
    },
    success: {
      200: json('What the service made of it.', BankNotificationResultSchema, 'BankNotificationResult'),
    },
    errors: [],
    handler: async ({ body }, { processor }) => ({
      data: { id: body.id, ...(await processor.process(body)) },
    }),
  }),
  defineOperation({
    method: 'post',
    path: '/bank/transfers',
    operationId: 'bankCounterTransfer',
    tag: 'Bank',
    summary: "The simulated bank's payer counter (test accounts only)",
    auth: 'address',
    admit: (_caller, { publicBankCounter }) => {
      if (!publicBankCounter) throw new HttpError(404, 'route_not_found', 'No route POST /bank/transfers.');
    },
    body: transferBody,
    success: { 200: json('What the bank did.', SimulatedTransferSchema, 'SimulatedTransfer') },
    errors: [403, 404],
    handler: async ({ body }, { bank }) => {
      const environment = await bank.accountEnvironment(body.accountNumber);
      if (environment === undefined) throw notFound('account');
      if (environment !== 'test') {
        throw new HttpError(403, 'test_mode_only', 'The simulated bank moves money only for test accounts.');
      }
      return { data: await transferAtBank(bank, body.accountNumber, body.amount, body.payerAccount) };
    },
  }),
];
