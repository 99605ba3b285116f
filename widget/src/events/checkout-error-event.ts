/**
 * `servicepay-error` on `<servicepay-checkout>`: the checkout ended in ERROR. `message` is for the merchant's
 * developer (what failed and what to do; the payer reads their own words on the screen). The checkout's only
 * outcome event: at once when no account was shown yet, else when the payer leaves the ERROR screen (the
 * payment may still land before that, and then `servicepay-success` is the one).
 *
 * @example
 * checkout.addEventListener('servicepay-error', (event) => console.warn(event.message));
 */
export class CheckoutErrorEvent extends Event {
  static readonly eventName = 'servicepay-error';
  readonly message: string;

  constructor(message: string) {
    super(CheckoutErrorEvent.eventName, { bubbles: true, composed: true });
    this.message = message;
  }
}
