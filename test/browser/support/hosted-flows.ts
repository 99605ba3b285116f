/**
 * The payer-facing pages of issue 36 (a payment link's page and a session's hosted checkout), described once,
 * apart from any browser driver, so the three-engine tests (engines-hosted-pages.test.ts: Chromium through
 * playwright-core, Firefox over WebDriver BiDi, WebKit through WebKitGTK's driver) walk the same flows by the
 * same stable ids.
 *
 * Each step is data: a driver turns `goto` into its navigation, `fill` into typing into the element with that
 * id, `click` into a click, `waitForUrl` into waiting until the top document's address starts with `prefix`,
 * `waitForText` into waiting until the element with that id (in the page, not the checkout frame) holds the
 * text, `pay` into the payer's transfer of the session's amount to the account shown (the checkout frame's
 * `.digits`; the amount from `GET /api/widget/sessions?limit=1`, the business's newest) through the test
 * transfer helper (`POST /api/test/transfers` with the test key) and waiting for the "Payment received" heading,
 * and `cancelCheckout` into pressing the overlay's close control and then the
 * checkout frame's "Cancel payment" button (on the "Cancel this payment?" screen).
 */
export type FlowStep =
  | { kind: 'goto'; url: string }
  | { kind: 'fill'; id: string; value: string }
  | { kind: 'click'; id: string }
  | { kind: 'pay' }
  | { kind: 'cancelCheckout' }
  | { kind: 'waitForUrl'; prefix: string }
  | { kind: 'waitForText'; id: string; text: string }
  | { kind: 'expectStatus'; status: number };

/** The stable ids and names of the link's page (`/links/<id>`). */
export const LINK_PAGE = {
  form: 'payer-form',
  name: 'name',
  email: 'email',
  phone: 'phone',
  submit: 'continue',
  amount: 'amount',
  /** Each field's error, when it has one: `<field>-error`. */
  errorOf: (field: 'name' | 'email' | 'phone') => `${field}-error`,
  /** The message of a one-line page (closed link, budget spent, a checkout that ended). */
  message: 'message',
} as const;

/** The stable ids of the hosted checkout page (`/checkout/<session id>`). */
export const CHECKOUT_PAGE = {
  status: 'hosted-status',
  /** Shown instead of the checkout when the address carries no (or a spent) client secret. */
  alreadyOpened: 'hosted-used',
  /** The overlay element holding the checkout frame, as on a merchant page. */
  checkoutElement: 'servicepay-checkout',
} as const;

/** A payer opens a link, types a name and an email, pays, and lands on the merchant's `successUrl`. */
export function payThroughLink(linkUrl: string, successPrefix: string): FlowStep[] {
  return [
    { kind: 'goto', url: linkUrl },
    { kind: 'fill', id: LINK_PAGE.name, value: 'Chioma Okafor' },
    { kind: 'fill', id: LINK_PAGE.email, value: 'chioma@example.com' },
    { kind: 'click', id: LINK_PAGE.submit },
    { kind: 'pay' },
    { kind: 'waitForUrl', prefix: successPrefix },
  ];
}

/** A session made with `successUrl` opens at its `url`, is paid, and ends at `successUrl`. */
export function payHostedCheckout(sessionUrl: string, successPrefix: string): FlowStep[] {
  return [{ kind: 'goto', url: sessionUrl }, { kind: 'pay' }, { kind: 'waitForUrl', prefix: successPrefix }];
}

/** The payer cancels the hosted checkout and lands on `cancelUrl`. */
export function cancelHostedCheckout(sessionUrl: string, cancelPrefix: string): FlowStep[] {
  return [
    { kind: 'goto', url: sessionUrl },
    { kind: 'cancelCheckout' },
    { kind: 'waitForUrl', prefix: cancelPrefix },
  ];
}

/** A deactivated (or paid one-time) link answers 410 with a page that says so. */
export function closedLink(linkUrl: string): FlowStep[] {
  return [
    { kind: 'goto', url: linkUrl },
    { kind: 'expectStatus', status: 410 },
    { kind: 'waitForText', id: LINK_PAGE.message, text: 'Ask the seller for a new link' },
  ];
}
