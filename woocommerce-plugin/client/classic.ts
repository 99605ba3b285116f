import { payOrder } from './pay-order.ts';

interface ClassicData {
  orderId: string;
  orderKey: string;
  nonce: string;
  restPath: string;
}

const data = (window as unknown as { servicepayClassic?: ClassicData }).servicepayClassic;
const root = document.getElementById('servicepay-pay');

if (data && root) {
  const button = root.querySelector<HTMLButtonElement>('.servicepay-open');
  const region = root.querySelector<HTMLElement>('.servicepay-notice');
  /**
   * Shows the page's WooCommerce notice for an outcome (rendered by the server with WooCommerce's own
   * templates, so the theme styles it), with `text` in the error notice's slot; none for `undefined`.
   */
  const say = (outcome: 'cancelled' | 'expired' | 'error' | undefined, text = '') => {
    if (!region) return;
    region.replaceChildren();
    const notice = outcome && root.querySelector(`[data-servicepay-outcome="${outcome}"]`);
    if (!notice) return;
    const copy = notice.cloneNode(true) as HTMLElement;
    copy.removeAttribute('data-servicepay-outcome');
    const slot = copy.querySelector('.servicepay-notice-text');
    if (slot) slot.textContent = text;
    region.append(copy);
  };
  const open = async () => {
    if (button) button.disabled = true;
    say(undefined);
    const outcome = await payOrder(data);
    if (outcome.type === 'paid' || outcome.type === 'held') {
      window.location.assign(outcome.redirect);
      return;
    }
    say(outcome.type, outcome.type === 'error' ? outcome.message : '');
    if (button) {
      button.disabled = false;
      button.focus();
    }
  };
  button?.addEventListener('click', () => void open());
  // The payer already chose to pay: open at once, the button is there to try again.
  void open();
}
