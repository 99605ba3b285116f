/**
 * `servicepay-error` on `<servicepay-checkout>`: the checkout reached ERROR. Fired once, with a message a
 * payer understands (or, for an integration mistake, one that tells the developer what to change).
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
