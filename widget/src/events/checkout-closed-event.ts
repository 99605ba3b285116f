/**
 * `servicepay-close` on `<servicepay-checkout>`: the overlay closed and everything it made is gone. Fired once,
 * after whichever of success, cancel or error came first (or none, for `ServicePay.close()`).
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
