import type { PaymentResult } from '../protocol/messages.ts';

/**
 * `servicepay-success` on `<servicepay-checkout>`: the payment was confirmed (SUCCESS). The checkout's only outcome event.
 *
 * @example
 * checkout.addEventListener('servicepay-success', (event) => console.log(event.payment.reference));
 */
export class SuccessEvent extends Event {
  static readonly eventName = 'servicepay-success';
  readonly payment: PaymentResult;

  constructor(payment: PaymentResult) {
    super(SuccessEvent.eventName, { bubbles: true, composed: true });
    this.payment = payment;
  }
}
