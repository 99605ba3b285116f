import apiFetch from '@wordpress/api-fetch';
import { __ } from '@wordpress/i18n';
import type { ServicePayGlobal } from './servicepay-global.ts';

/** What the page knows about the order it pays: never an amount. */
export interface OrderToPay {
  orderId: string;
  orderKey: string;
  nonce: string;
  /** `/servicepay/v1`: the shop's REST namespace. */
  restPath: string;
}

/** How a payment attempt ended, as the page must act on it. */
export type PayOutcome =
  | { type: 'paid'; redirect: string }
  | { type: 'cancelled' }
  | { type: 'error'; message: string };

interface SessionAnswer {
  paid: boolean;
  redirect: string;
  clientSecret?: string;
  widgetScriptUrl?: string;
}

interface ConfirmAnswer {
  paid: boolean;
  redirect: string;
}

const loaded = new Map<string, Promise<ServicePayGlobal>>();

/** Loads `widget.js` once per URL and resolves with `window.ServicePay`. */
function loadWidget(url: string): Promise<ServicePayGlobal> {
  const existing = loaded.get(url);
  if (existing) return existing;
  const promise = new Promise<ServicePayGlobal>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = url;
    script.async = true;
    script.onload = () =>
      window.ServicePay
        ? resolve(window.ServicePay)
        : reject(new Error('widget.js did not define ServicePay'));
    script.onerror = () => reject(new Error(`widget.js could not be loaded from ${url}`));
    document.head.appendChild(script);
  });
  // A failed load may be retried on the next attempt.
  promise.catch(() => loaded.delete(url));
  loaded.set(url, promise);
  return promise;
}

const messageOf = (error: unknown): string =>
  typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string'
    ? error.message
    : __('Bank transfer is not available right now. Please try again.', 'servicepay-woocommerce');

/**
 * Opens a new ServicePay session for the order (created by the shop's server from the order total), shows
 * the widget, and resolves once the payer paid, cancelled, or the widget failed. On success it asks the
 * shop to confirm with the service before sending the payer on.
 *
 * @example
 * const outcome = await payOrder({ orderId: '42', orderKey: 'wc_order_abc', nonce, restPath: '/servicepay/v1' });
 * if (outcome.type === 'paid') window.location.assign(outcome.redirect);
 */
export async function payOrder(order: OrderToPay): Promise<PayOutcome> {
  const path = `${order.restPath}/orders/${encodeURIComponent(order.orderId)}`;
  const data = { key: order.orderKey, nonce: order.nonce };
  let session: SessionAnswer;
  let widget: ServicePayGlobal;
  try {
    session = await apiFetch<SessionAnswer>({ path: `${path}/session`, method: 'POST', data });
    if (session.paid || !session.clientSecret || !session.widgetScriptUrl) {
      return { type: 'paid', redirect: session.redirect };
    }
    widget = await loadWidget(session.widgetScriptUrl);
  } catch (error) {
    return { type: 'error', message: messageOf(error) };
  }
  const clientSecret = session.clientSecret;
  return new Promise<PayOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: PayOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    widget.init({
      clientSecret,
      onSuccess: () => {
        apiFetch<ConfirmAnswer>({ path: `${path}/confirm`, method: 'POST', data })
          .then((answer) => finish({ type: 'paid', redirect: answer.redirect }))
          // The order-received page confirms again on its own, so the payer goes there either way.
          .catch(() => finish({ type: 'paid', redirect: session.redirect }));
      },
      onError: ({ message }) => finish({ type: 'error', message }),
      onCancel: () => finish({ type: 'cancelled' }),
    });
  });
}

/** The notice for a payer who closed the widget: the order is kept and can be paid again. */
export const cancelledMessage = (): string =>
  __(
    'You closed the bank transfer before paying. Your order is saved: place it again to get a new account number.',
    'servicepay-woocommerce',
  );
