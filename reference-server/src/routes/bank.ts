import { BankNotificationSchema, SimulateTransferParamsSchema } from '@servicepay/node/protocol';
import express, { type RequestHandler, Router } from 'express';
import type { BankNotificationProcessor } from '../bank/notification-processor.ts';
import { type SimulatedBank, UnknownAccountError } from '../bank/simulated-bank.ts';
import { HttpError, notFound } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import { verifySignature } from '../internal/signature.ts';
import { validationError } from '../middleware/error-handler.ts';
import { sendData } from './envelope.ts';

export interface BankRouteDeps {
  processor: BankNotificationProcessor;
  bank: SimulatedBank;
  clock: Clock;
  bankSecret: string;
  toleranceSeconds: number;
  publicCounter: boolean;
  perAddressLimit: RequestHandler;
}

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

/**
 * `POST /bank/notifications`: the bank's signed notice of a transfer. The signature and its timestamp are
 * checked on the raw bytes before the body is parsed, so this router is mounted before the JSON parser.
 */
export function bankNotificationRoutes(deps: BankRouteDeps): Router {
  const router = Router();

  router.post(
    '/bank/notifications',
    express.raw({ type: () => true, limit: 64 * 1024 }),
    async (req, res) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const check = verifySignature(
        raw,
        req.get('X-Bank-Signature'),
        deps.bankSecret,
        Math.floor(deps.clock.now() / 1000),
        deps.toleranceSeconds,
      );
      if (!check.ok)
        throw new HttpError(401, 'invalid_signature', `Bank signature check failed (${check.reason}).`);
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new HttpError(400, 'malformed_json', 'The notification is not valid JSON.');
      }
      const parsed = BankNotificationSchema.safeParse(json);
      if (!parsed.success) throw validationError(parsed.error, 'bank notification');
      const processed = await deps.processor.process(parsed.data);
      sendData(res, { id: parsed.data.id, ...processed });
    },
  );

  return router;
}

/** `POST /bank/transfers`: the simulated bank's payer counter (test accounts only), what `servicepay-server transfer` calls. */
export function bankCounterRoutes(deps: BankRouteDeps): Router {
  const router = Router();

  router.post('/bank/transfers', deps.perAddressLimit, async (req, res) => {
    if (!deps.publicCounter) throw new HttpError(404, 'route_not_found', 'No route POST /bank/transfers.');
    const parsed = SimulateTransferParamsSchema.safeParse(req.body);
    if (!parsed.success) throw validationError(parsed.error, 'transfer');
    const environment = await deps.bank.accountEnvironment(parsed.data.accountNumber);
    if (environment === undefined) throw notFound('account');
    if (environment !== 'test') {
      throw new HttpError(403, 'test_mode_only', 'The simulated bank moves money only for test accounts.');
    }
    const transfer = await transferAtBank(
      deps.bank,
      parsed.data.accountNumber,
      parsed.data.amount,
      parsed.data.payerAccount,
    );
    sendData(res, transfer);
  });

  return router;
}
