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
  /**
   * A confirmed payment, with `{ id, reference, status }`. Exactly one of `onSuccess`, `onCancel` and `onError`
   * is called per checkout (none when the page closes it with `ServicePay.close()`).
   */
  onSuccess: (payment: PaymentResult) => void;
  /**
   * The checkout ended in ERROR, with `{ message }` for the developer (the payer reads their own words on the
   * screen). When the account was already shown, it is called as the payer leaves the ERROR screen: the
   * payment may still land first, and then `onSuccess` is called instead.
   */
  onError: (error: { message: string }) => void;
  /**
   * The checkout ended without a payment and without a fault: the payer cancelled (the session is cancelled),
   * or the session's time ran out (`expired`). Ask your backend for the session's status to tell them apart.
   */
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
