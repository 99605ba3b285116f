/**
 * Every text the payer or the merchant's developer can see, in one place, ready for translation: a translation
 * is another pair of objects of these shapes. Functions take the values they interpolate; nothing else builds a
 * sentence. One object per bundle that shows them, so `widget.js` on the merchant page carries only the
 * overlay's texts and `@servicepay/react` only its loader's.
 *
 * @example
 * import { frameTexts } from './texts.ts';
 * frameTexts.payWith('Ada Shop'); // "Pay Ada Shop"
 */

/** The overlay on the merchant page, and messages for the merchant's developer (onError, console). */
export const hostTexts = {
  dialogLabel: 'ServicePay checkout',
  frameTitle: 'ServicePay checkout: pay by bank transfer',
  close: 'Close checkout',
  frameFailed: 'The checkout could not be loaded. Check your connection and try again.',
  /**
   * What the payer reads when the page set the checkout up wrongly (its developer gets the reason by onError).
   * "The seller", as the button under it: no merchant's name is known yet, and a hosted checkout has no shop.
   */
  checkoutUnavailable: 'The checkout could not be opened. Go back to the seller and try again.',
  /** The way back when the frame never came (no merchant's name yet); `frameTexts.backToMerchantPlain`'s words. */
  backToMerchantPlain: 'Back to the seller',

  // Developer-facing messages (onError and the console).
  frameUnavailable: (host: string) =>
    `ServicePay: the checkout frame from ${host} did not answer within 15 seconds (blocked by a Content-Security-Policy frame-src, offline, or the widget host is down).`,
  badOptions: (problem: string) => `ServicePay.init: ${problem}`,
  missingSecret:
    'clientSecret must be the cs_test_… or cs_live_… string your backend got from session creation.',
  missingOnSuccess: 'onSuccess must be a function.',
  missingOnError: 'onError must be a function.',
  badOnCancel: 'onCancel must be a function when given.',
  alreadyOpen: 'a checkout is already open; call ServicePay.close() first or wait for it to finish.',
  ignoredOption: (name: string) =>
    `ServicePay.init: option "${name}" is ignored (amount, currency and payer come from the session).`,
  noScriptOrigin: 'widget.js must be loaded with a <script src> from a ServicePay widget host.',
} as const;

/**
 * What the frame reports through `onError`: for the merchant's developer, never shown to the payer (the ERROR
 * screen shows the payer's words from `frameTexts`). Each names what failed and what to do.
 */
export const developerTexts = {
  wrongHost: (secretEnvironment: string, hostEnvironment: string, rightHost: string) =>
    `This is a ${secretEnvironment} session, but widget.js was loaded from the ${hostEnvironment} widget host. ` +
    `Load ${rightHost}/latest/widget.js instead.`,
  /** The service refused a call of the checkout (`what`: the call, such as `POST /api/widget/bootstrap`). */
  refused: (what: string, status: number, code: string, message: string) =>
    `ServicePay: ${what} answered ${status} ${code}: ${message}`,
  unreachable: (what: string, apiUrl: string) =>
    `ServicePay: ${what} could not reach the API at ${apiUrl} (offline, blocked by a Content-Security-Policy connect-src, or the service is down).`,
  serviceFault: (what: string, status: number) =>
    `ServicePay: ${what} answered ${status}; the service could not do it. Try again; the session may still be paid (ask your backend: GET /api/widget/sessions/{id}).`,
  streamLost: (sessionId: string) =>
    `ServicePay: the checkout lost its push stream for session ${sessionId} and gave up reconnecting. The session may still be paid: ask your backend (GET /api/widget/sessions/${sessionId}).`,
  streamRefused: (sessionId: string, status: number) =>
    `ServicePay: the push stream of session ${sessionId} was refused (${status}): the widget token is no longer valid. The session may still be paid: ask your backend (GET /api/widget/sessions/${sessionId}).`,
} as const;

/** Messages of `@servicepay/react`'s script loader, for the merchant's developer (through `onError`). */
export const reactTexts = {
  scriptFailed: (src: string) => `ServicePay: could not load ${src}.`,
  scriptDefinedNothing: (src: string) => `ServicePay: ${src} loaded but did not define window.ServicePay.`,
} as const;

/** The checkout screens inside the frame. */
export const frameTexts = {
  /** `frame.html`'s `<title>`, written into the page by the build (it is there before any script runs). */
  pageTitle: 'ServicePay checkout',
  payWith: (merchant: string) => `Pay ${merchant}`,
  testBadge: 'Test mode: no real money moves',
  initializing: 'Preparing your payment details…',
  transferExactly: 'Transfer exactly',
  toThisAccount: 'to this account',
  bank: 'Bank',
  accountNumber: 'Account number',
  accountName: 'Account name',
  copy: 'Copy',
  copyLabel: (number: string) => `Copy account number ${number}`,
  copied: 'Copied',
  copiedAnnouncement: 'Account number copied',
  copyFailed: 'Copy failed: select the number instead',
  countdownLabel: 'This account expires in',
  countdownMilestone: (minutes: number) =>
    minutes === 1 ? 'One minute left to transfer.' : `${minutes} minutes left to transfer.`,
  singleUse: 'This account is for this payment only and accepts only the exact amount.',
  sentMoney: "I've sent the money",
  confirmingTitle: 'Waiting for your transfer',
  confirmingBody: 'We are listening for your bank. This page updates by itself as soon as the money arrives.',
  showDetails: 'Show the account details again',
  successTitle: 'Payment received',
  successBody: (amount: string, merchant: string) => `${amount} paid to ${merchant}.`,
  // True wherever it shows: the overlay closes over the shop's page; the hosted page goes where the session's
  // return goes, which without a successUrl is the service's own page, not the merchant (so no "back to").
  successRedirect: 'This checkout closes in 3 seconds…',
  continue: 'Continue',
  mismatchTitle: 'The amount did not match',
  mismatchBody: (expected: string, received: string) =>
    `We expected ${expected} but received ${received}. Your bank is returning the money.`,
  mismatchRetry: (expected: string) =>
    `Send exactly ${expected} to the same account to complete the payment.`,
  expected: 'Expected',
  received: 'Received',
  expiredTitle: 'This account has expired',
  expiredBody: 'No transfer arrived in time. Get a new account number to try again.',
  newAccount: 'Get a new account number',
  sessionEndedTitle: 'This payment has ended',
  // Said on the merchant's page and on the hosted checkout alike: a hosted page has no shop to go back to, and the
  // button's way back is the merchant's (the overlay closes; the hosted page goes where the session's return goes).
  sessionEndedBody: 'The time to pay ran out, so this payment can no longer be completed.',
  confirmCancelTitle: 'Cancel this payment?',
  confirmCancelBody:
    'Already sent the money? Then keep this window open: your payment is confirmed as soon as your bank delivers it. If you cancel now, a transfer that has not arrived yet is returned to you by your bank.',
  keepPaying: 'Keep paying',
  cancelPayment: 'Cancel payment',
  cancelledTitle: 'Payment cancelled',
  cancelledBody: 'No money was taken. You can close this window.',
  errorTitle: 'Something went wrong',
  reconnect: 'Try again',
  // The one way out to the merchant on every screen that has one (EXPIRED, ended, CANCELLED, ERROR), on a shop's
  // page and on the hosted checkout alike. Without a name, "the seller": true on both, where "the shop" is not on
  // a hosted page, and the word the hosted pages use for an unnamed merchant (docs/decisions/widget.md, "Texts").
  backToMerchant: (merchant: string) => `Back to ${merchant}`,
  backToMerchantPlain: 'Back to the seller',
  connectionLost: 'We lost the connection to the payment service. If you already sent the money, it is safe.',
  networkError: 'We could not reach the payment service. Check your connection and try again.',
  serviceError: 'The payment service could not start this payment.',
  // The ERROR screen's words for what the developer reads in onError (never the service's own message). Said
  // before the bootstrap answered, so no merchant's name yet: "the seller", as the button under them, true on a
  // shop's page and on the hosted checkout (which has no shop).
  linkInvalid: 'This payment link is not valid. Go back to the seller and start the payment again.',
  linkUsed:
    'This payment was already opened once and cannot be opened again. Go back to the seller and start the payment again.',
  linkEnded: 'This payment has ended. Go back to the seller and start the payment again.',
  cannotOpen: 'This checkout could not be opened. Go back to the seller and try again.',
  /** After the account was shown, so by the session's name (empty: "the seller"); the hosted return page's words. */
  followingStopped: (merchant: string) =>
    `We can no longer follow this payment here. If you already sent the money, it is safe: ${merchant || 'the seller'} is told as soon as it arrives.`,
  actionFailed:
    'That did not work: we could not reach the payment service. If you already sent the money, it is safe.',
  announce: {
    awaiting: 'Account details ready. Transfer the exact amount shown.',
    confirming: 'Waiting for your transfer.',
    success: 'Payment received.',
    mismatch: 'The amount did not match. Your bank is returning the money.',
    expired: 'The account has expired.',
    cancelled: 'Payment cancelled.',
    error: 'Something went wrong.',
    confirmCancel: 'Cancel this payment? If you already sent the money, keep paying.',
  },
} as const;

export type HostTexts = typeof hostTexts;
export type FrameTexts = typeof frameTexts;
