import type { PaymentResult } from '../protocol/messages.ts';
import { hostTexts as texts } from '../texts.ts';

/**
 * The options of `ServicePay.init` (spec §4). Amount and currency are not among them: they come from the session.
 *
 * @example
 * const options: InitOptions = { clientSecret, onSuccess: ({ reference }) => done(reference), onError: warn };
 */
export interface InitOptions {
  /** `cs_test_…` or `cs_live_…`, fetched fresh from the merchant's backend. */
  clientSecret: string;
  /** Called once on a confirmed payment with `{ id, reference, status }`. */
  onSuccess: (payment: PaymentResult) => void;
  /** Called once on a widget or network error with `{ message }`. */
  onError: (error: { message: string }) => void;
  /** Called once when the payer cancels or closes the checkout. */
  onCancel?: () => void;
}

const KNOWN = new Set(['clientSecret', 'onSuccess', 'onError', 'onCancel']);
export const CLIENT_SECRET = /^cs_(test|live)_[0-9A-Za-z]{8,200}$/;

export type CheckedOptions =
  | { ok: true; options: InitOptions; ignored: string[] }
  | { ok: false; message: string; onError: ((error: { message: string }) => void) | undefined };

/**
 * Checks what the merchant page passed to `init` without trusting its shape. Unknown options (an `amount`,
 * say) are listed to be warned about and otherwise ignored: nothing the page passes changes the payment.
 *
 * @example
 * const checked = checkInitOptions(options);
 * if (!checked.ok) report(checked);
 */
export function checkInitOptions(input: unknown): CheckedOptions {
  if (typeof input !== 'object' || input === null) {
    return { ok: false, message: texts.badOptions(texts.missingSecret), onError: undefined };
  }
  const raw = input as Record<string, unknown>;
  const onError = typeof raw.onError === 'function' ? (raw.onError as InitOptions['onError']) : undefined;
  const fail = (problem: string): CheckedOptions => ({
    ok: false,
    message: texts.badOptions(problem),
    onError,
  });
  if (!onError) return fail(texts.missingOnError);
  if (typeof raw.clientSecret !== 'string' || !CLIENT_SECRET.test(raw.clientSecret)) {
    return fail(texts.missingSecret);
  }
  if (typeof raw.onSuccess !== 'function') return fail(texts.missingOnSuccess);
  if (raw.onCancel !== undefined && typeof raw.onCancel !== 'function') return fail(texts.badOnCancel);
  const options: InitOptions = {
    clientSecret: raw.clientSecret,
    onSuccess: raw.onSuccess as InitOptions['onSuccess'],
    onError,
  };
  if (raw.onCancel) options.onCancel = raw.onCancel as () => void;
  return { ok: true, options, ignored: Object.keys(raw).filter((key) => !KNOWN.has(key)) };
}
