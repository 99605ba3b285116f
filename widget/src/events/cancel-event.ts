/**
 * `servicepay-cancel` on `<servicepay-checkout>`: the payer cancelled and the session is cancelled on the
 * service (CANCELLED). Fired once.
 *
 * @example
 * checkout.addEventListener('servicepay-cancel', () => showCart());
 */
export class CancelEvent extends Event {
  static readonly eventName = 'servicepay-cancel';

  constructor() {
    super(CancelEvent.eventName, { bubbles: true, composed: true });
  }
}
