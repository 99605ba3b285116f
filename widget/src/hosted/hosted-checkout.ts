/**
 * `hosted.js`: the one script of the hosted checkout page (`/checkout/<session id>` on a widget host, issue 36).
 * It reads the client secret from the address's fragment (which no server, log or `Referer` ever saw), drops
 * it from the address bar and the history, and opens the widget's own `<servicepay-checkout>` full page: every
 * screen, text and behaviour of the overlay. When the checkout closes (3 s after SUCCESS or CANCELLED, or when
 * the payer leaves a final screen) the page goes to `/checkout/<id>/return`, where the service sends the payer
 * to the merchant's `successUrl` or `cancelUrl` by what the session says, never by what the page says.
 */
import '../components/servicepay-checkout/define.ts';

/** How long after the outcome the page leaves by itself if the checkout did not close (spec §8: 3 s). */
const RETURN_AFTER_MS = 3_000;

function start(): void {
  const status = document.getElementById('hosted-status');
  const returnPath = status?.dataset.return;
  if (!status || !returnPath) return;
  const secret = decodeURIComponent(location.hash.slice(1));
  // Out of the address bar and the history at once: a reload or a shared screenshot shows no secret.
  history.replaceState(null, '', location.pathname + location.search);
  if (!/^cs_(test|live)_[0-9A-Za-z]+$/.test(secret)) {
    status.hidden = true;
    const used = document.getElementById('hosted-used');
    if (used) used.hidden = false;
    return;
  }
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    location.replace(returnPath);
  };
  const checkout = document.createElement('servicepay-checkout');
  checkout.setAttribute('client-secret', secret);
  const leaveSoon = () => setTimeout(leave, RETURN_AFTER_MS);
  checkout.addEventListener('servicepay-success', leaveSoon);
  checkout.addEventListener('servicepay-cancel', leaveSoon);
  checkout.addEventListener('servicepay-close', leave);
  status.textContent = '';
  document.body.append(checkout);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
