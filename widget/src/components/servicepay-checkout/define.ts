import { ServicePayCheckout } from './servicepay-checkout.ts';

// Another copy of widget.js may have defined it first; defining twice would throw at the page.
if (!customElements.get('servicepay-checkout'))
  customElements.define('servicepay-checkout', ServicePayCheckout);
