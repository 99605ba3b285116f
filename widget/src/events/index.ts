export { CancelEvent } from './cancel-event.ts';
export { CheckoutClosedEvent } from './checkout-closed-event.ts';
export { CheckoutErrorEvent } from './checkout-error-event.ts';
export { SuccessEvent } from './success-event.ts';
