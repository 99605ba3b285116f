/**
 * `servicepay-close` on `<servicepay-checkout>`: the overlay closed and everything it made is gone. Fired once,
 * after the checkout's one outcome event (or none, when the page closed it: `ServicePay.close()`, removal).
 *
 * @example
 * checkout.addEventListener('servicepay-close', () => checkout.remove());
 */
export class CheckoutClosedEvent extends Event {
  static readonly eventName = 'servicepay-close';

  constructor() {
    super(CheckoutClosedEvent.eventName, { bubbles: true, composed: true });
  }
}
