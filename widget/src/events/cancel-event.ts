/**
 * `servicepay-cancel` on `<servicepay-checkout>`: the checkout ended without a payment and without a fault.
 * The payer cancelled (CANCELLED: the session is cancelled on the service), or the session's time ran out
 * (ENDED: `expired` on the service). Ask your backend which, if it matters. The checkout's only outcome event.
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
