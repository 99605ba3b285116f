import { createElement, useEffect } from '@wordpress/element';
import { __ } from '@wordpress/i18n';
import { type PayOutcome, payOrder } from './pay-order.ts';

interface ServicePayBlocksData {
  title?: string;
  description?: string;
  nonce: string;
  restPath: string;
  supports?: string[];
  /** The currencies the service takes (ISO 4217). */
  currencies?: string[];
}

interface CheckoutSuccessArgs {
  orderId: number;
  redirectUrl: string;
}

type ObserverResponse =
  | { type: string; redirectUrl?: string }
  | { type: string; message: string; messageContext?: string; retry?: boolean };

interface PaymentMethodProps {
  eventRegistration: {
    onCheckoutSuccess(callback: (args: CheckoutSuccessArgs) => Promise<ObserverResponse>): () => void;
  };
  emitResponse: {
    responseTypes: { SUCCESS: string; ERROR: string };
    noticeContexts: { PAYMENTS: string };
  };
}

interface BlocksGlobals {
  wcBlocksRegistry: { registerPaymentMethod(config: Record<string, unknown>): void };
  wcSettings: { getSetting<T>(name: string, fallback: T): T };
}

const wc = (window as unknown as { wc: BlocksGlobals }).wc;
const data = wc.wcSettings.getSetting<ServicePayBlocksData>('servicepay_data', { nonce: '', restPath: '' });
const title = data.title || __('Bank transfer', 'servicepay-woocommerce');

/** The order key from the order-received URL the Store API answered with. */
const orderKeyOf = (redirectUrl: string): string =>
  new URL(redirectUrl, window.location.href).searchParams.get('key') ?? '';

function Content({ eventRegistration, emitResponse }: PaymentMethodProps) {
  const { onCheckoutSuccess } = eventRegistration;
  useEffect(
    () =>
      // The Store API has placed the order (pending): open the widget before WooCommerce redirects.
      onCheckoutSuccess(async ({ orderId, redirectUrl }) => {
        const outcome = await payOrder({
          orderId: String(orderId),
          orderKey: orderKeyOf(redirectUrl),
          nonce: data.nonce,
          restPath: data.restPath,
        });
        switch (outcome.type) {
          case 'paid':
          case 'held':
            // To the order: paid, or on hold for the shop to check (its page says so).
            return { type: emitResponse.responseTypes.SUCCESS, redirectUrl: outcome.redirect };
          default:
            // Every other ending gives the checkout back with a notice: "Place order" works again at once.
            return {
              type: emitResponse.responseTypes.ERROR,
              message: tryAgainMessage(outcome),
              messageContext: emitResponse.noticeContexts.PAYMENTS,
              retry: true,
            };
        }
      }),
    [onCheckoutSuccess, emitResponse],
  );
  return createElement('p', { className: 'servicepay-description' }, data.description ?? '');
}

/** What the payer reads above the checkout when they can place the order again. */
function tryAgainMessage(outcome: Exclude<PayOutcome, { type: 'paid' | 'held' }>): string {
  switch (outcome.type) {
    case 'cancelled':
      return __(
        'You closed the bank transfer before paying. Your order is saved: place it again to get a new account number.',
        'servicepay-woocommerce',
      );
    case 'expired':
      return __(
        'The time to pay by bank transfer ran out before your transfer arrived. Your order is saved: place it again to get a new account number.',
        'servicepay-woocommerce',
      );
    case 'error':
      return outcome.message;
  }
}

const Label = () => createElement('span', { className: 'servicepay-label' }, title);

wc.wcBlocksRegistry.registerPaymentMethod({
  name: 'servicepay',
  label: createElement(Label),
  ariaLabel: title,
  content: createElement(Content as never),
  edit: createElement(Content as never),
  // The server offers the gateway only in a currency the service takes (is_available); this keeps it hidden
  // too when a currency switcher changes the cart's currency without a new page.
  canMakePayment: ({ cartTotals }: { cartTotals?: { currency_code?: string } }) =>
    !cartTotals?.currency_code || (data.currencies ?? []).includes(cartTotals.currency_code),
  supports: { features: data.supports ?? ['products'] },
});
