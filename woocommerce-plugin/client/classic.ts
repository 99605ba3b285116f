import { cancelledMessage, payOrder } from './pay-order.ts';

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
  const notice = root.querySelector<HTMLElement>('.servicepay-notice');
  const say = (text: string) => {
    if (notice) notice.textContent = text;
  };
  const open = async () => {
    if (button) button.disabled = true;
    say('');
    const outcome = await payOrder(data);
    if (outcome.type === 'paid') {
      window.location.assign(outcome.redirect);
      return;
    }
    say(outcome.type === 'cancelled' ? cancelledMessage() : outcome.message);
    if (button) button.disabled = false;
  };
  button?.addEventListener('click', () => void open());
  // The payer already chose to pay: open at once, the button is there to try again.
  void open();
}
