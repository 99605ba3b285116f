/**
 * `widget.js`: what the merchant page loads with one script tag. It defines `window.ServicePay` and the
 * `<servicepay-checkout>` element and creates no DOM until `init`. It never throws at the page: a bad call is
 * reported through `onError` (or, without one, one `console.error`).
 */
import '../components/servicepay-checkout/define.ts';
import type { ServicePayCheckout } from '../components/servicepay-checkout/servicepay-checkout.ts';
import { CancelEvent } from '../events/cancel-event.ts';
import { CheckoutClosedEvent } from '../events/checkout-closed-event.ts';
import { CheckoutErrorEvent } from '../events/checkout-error-event.ts';
import { SuccessEvent } from '../events/success-event.ts';
import { hostTexts as texts } from '../texts.ts';
import { WIDGET_VERSION } from '../version.ts';
import { checkInitOptions, type InitOptions } from './init-options.ts';

/**
 * `window.ServicePay`, what `widget.js` defines.
 *
 * @example
 * window.ServicePay.init({ clientSecret, onSuccess: console.log, onError: console.warn });
 */
export interface ServicePayGlobal {
  /** Opens the checkout overlay for one session. A second call while one is open is refused through its `onError`. */
  init(options: InitOptions): void;
  /** Closes an open checkout at once. The session stays open on the service (no cancel, no `onCancel`). */
  close(): void;
  readonly version: string;
}

let current: ServicePayCheckout | undefined;

/** Runs a merchant callback so that its exception surfaces in the console without breaking the checkout. */
const call = <T extends unknown[]>(callback: ((...args: T) => void) | undefined, ...args: T): void => {
  if (!callback) return;
  try {
    callback(...args);
  } catch (error) {
    setTimeout(() => {
      throw error;
    });
  }
};

function init(input: InitOptions): void {
  const checked = checkInitOptions(input);
  if (!checked.ok) {
    if (checked.onError) {
      const report = checked.onError;
      queueMicrotask(() => call(report, { message: checked.message }));
    } else console.error(checked.message);
    return;
  }
  const { options } = checked;
  for (const name of checked.ignored) console.warn(texts.ignoredOption(name));
  if (current) {
    queueMicrotask(() => call(options.onError, { message: texts.badOptions(texts.alreadyOpen) }));
    return;
  }
  const checkout = document.createElement('servicepay-checkout');
  checkout.setAttribute('client-secret', options.clientSecret);
  // Only the element's own events count: a page script dispatching a look-alike Event changes nothing.
  checkout.addEventListener('servicepay-success', (event) => {
    if (event instanceof SuccessEvent) call(options.onSuccess, { ...event.payment });
  });
  checkout.addEventListener('servicepay-error', (event) => {
    if (event instanceof CheckoutErrorEvent) call(options.onError, { message: event.message });
  });
  checkout.addEventListener('servicepay-cancel', (event) => {
    if (event instanceof CancelEvent) call(options.onCancel);
  });
  checkout.addEventListener('servicepay-close', (event) => {
    if (!(event instanceof CheckoutClosedEvent)) return;
    checkout.remove();
    if (current === checkout) current = undefined;
  });
  current = checkout;
  (document.body ?? document.documentElement).append(checkout);
}

function close(): void {
  current?.close();
}

declare global {
  interface Window {
    ServicePay?: ServicePayGlobal;
  }
}

// A second copy of the script (two tags, or a pinned and a latest one) keeps the first: one global, one state.
if (!window.ServicePay) {
  const api: ServicePayGlobal = Object.freeze({ init, close, version: WIDGET_VERSION });
  Object.defineProperty(window, 'ServicePay', {
    value: api,
    configurable: false,
    enumerable: true,
    writable: false,
  });
}
