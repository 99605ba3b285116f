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

/**
 * How a payment attempt ended, as the page must act on it: go to the order (`paid`, or `held`: paid, but the
 * order is on hold for the shop to check, which its page explains), or let the payer try again (`cancelled`,
 * `expired`, `error`). Every way the widget can end leads to one of these, so the page never waits for ever.
 */
export type PayOutcome =
  | { type: 'paid'; redirect: string }
  | { type: 'held'; redirect: string }
  | { type: 'cancelled' }
  | { type: 'expired' }
  | { type: 'error'; message: string };

/** What the shop says of the order (the session route when it opens none, and the confirm route). */
interface OrderState {
  paid: boolean;
  orderStatus: string;
  redirect: string;
}

interface SessionAnswer extends OrderState {
  clientSecret?: string;
  widgetScriptUrl?: string;
}

interface ConfirmAnswer extends OrderState {
  /** The session's status on the service ('' when it could not be asked). */
  sessionStatus: string;
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

/** The payer's words when bank transfer could not go on (the details are for the developer's console). */
const unavailable = (): string =>
  __('Bank transfer is not available right now. Please try again.', 'servicepay-woocommerce');

/** A message the shop's own REST route gave (written for the payer), else the payer's generic words. */
const shopMessageOf = (error: unknown): string =>
  typeof error === 'object' &&
  error !== null &&
  'code' in error &&
  typeof error.code === 'string' &&
  error.code.startsWith('servicepay_') &&
  'message' in error &&
  typeof error.message === 'string'
    ? error.message
    : unavailable();

/** Where an order that needs no new session stands: paid, on hold for the shop, or no longer payable. */
function settled(state: OrderState): PayOutcome {
  if (state.paid) return { type: 'paid', redirect: state.redirect };
  if (state.orderStatus === 'on-hold') return { type: 'held', redirect: state.redirect };
  return {
    type: 'error',
    message: __(
      'This order can no longer be paid by bank transfer. Please place a new order.',
      'servicepay-woocommerce',
    ),
  };
}

/**
 * Opens a new ServicePay session for the order (created by the shop's server from the order total), shows
 * the widget, and resolves once the checkout ended, whichever way: the widget calls exactly one of
 * `onSuccess`, `onCancel` and `onError`, and after each the shop is asked what is true of the order now
 * (`…/confirm`: it asks the service and settles), so the answer is the shop's, never the browser's guess.
 *
 * @example
 * const outcome = await payOrder({ orderId: '42', orderKey: 'wc_order_abc', nonce, restPath: '/servicepay/v1' });
 * if (outcome.type === 'paid' || outcome.type === 'held') window.location.assign(outcome.redirect);
 */
export async function payOrder(order: OrderToPay): Promise<PayOutcome> {
  const path = `${order.restPath}/orders/${encodeURIComponent(order.orderId)}`;
  const data = { key: order.orderKey, nonce: order.nonce };
  let session: SessionAnswer;
  let widget: ServicePayGlobal;
  try {
    session = await apiFetch<SessionAnswer>({ path: `${path}/session`, method: 'POST', data });
    if (!session.clientSecret || !session.widgetScriptUrl) return settled(session);
    widget = await loadWidget(session.widgetScriptUrl);
  } catch (error) {
    return { type: 'error', message: shopMessageOf(error) };
  }
  const clientSecret = session.clientSecret;
  /** The shop's word on the order after the widget ended; undefined when it could not be asked. */
  const confirm = () =>
    apiFetch<ConfirmAnswer>({ path: `${path}/confirm`, method: 'POST', data }).catch(() => undefined);
  const ended = await new Promise<'success' | 'cancel' | 'error'>((resolve) => {
    widget.init({
      clientSecret,
      onSuccess: () => resolve('success'),
      onCancel: () => resolve('cancel'),
      onError: ({ message }) => {
        // For the shop's developer; the payer already read what happened in the widget.
        console.error(`ServicePay: ${message}`);
        resolve('error');
      },
    });
  });
  const answer = await confirm();
  if (ended === 'success') {
    // Paid with another total than the order's (edited meanwhile): on hold, and its page says so.
    if (answer && !answer.paid && answer.orderStatus === 'on-hold') return settled(answer);
    // The order-received page confirms again on its own, so the payer goes there even when the shop could
    // not confirm yet.
    return { type: 'paid', redirect: answer?.redirect ?? session.redirect };
  }
  if (answer && (answer.paid || answer.orderStatus === 'on-hold')) return settled(answer);
  if (answer?.sessionStatus === 'expired') return { type: 'expired' };
  if (ended === 'cancel') return { type: 'cancelled' };
  return {
    type: 'error',
    message: __(
      'The bank transfer could not be completed. If you already sent the money, it is safe: your order is confirmed when it arrives.',
      'servicepay-woocommerce',
    ),
  };
}
