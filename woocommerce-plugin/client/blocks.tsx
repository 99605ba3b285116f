import { createElement, useEffect } from '@wordpress/element';
import { __ } from '@wordpress/i18n';
import { cancelledMessage, payOrder } from './pay-order.ts';

interface ServicePayBlocksData {
  title?: string;
  description?: string;
  nonce: string;
  restPath: string;
  supports?: string[];
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
        if (outcome.type === 'paid') {
          return { type: emitResponse.responseTypes.SUCCESS, redirectUrl: outcome.redirect };
        }
        return {
          type: emitResponse.responseTypes.ERROR,
          message: outcome.type === 'cancelled' ? cancelledMessage() : outcome.message,
          messageContext: emitResponse.noticeContexts.PAYMENTS,
          retry: true,
        };
      }),
    [onCheckoutSuccess, emitResponse],
  );
  return createElement('p', { className: 'servicepay-description' }, data.description ?? '');
}

const Label = () => createElement('span', { className: 'servicepay-label' }, title);

wc.wcBlocksRegistry.registerPaymentMethod({
  name: 'servicepay',
  label: createElement(Label),
  ariaLabel: title,
  content: createElement(Content as never),
  edit: createElement(Content as never),
  canMakePayment: () => true,
  supports: { features: data.supports ?? ['products'] },
});
