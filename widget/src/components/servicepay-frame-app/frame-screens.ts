import type { Mismatch, PublicSession, VirtualAccount } from '@servicepay/node/protocol';
import { html, nothing, type TemplateResult } from 'lit';
import { formatAmount, formatCountdown } from '../../frame/format.ts';
import { frameTexts as texts } from '../../texts.ts';

/**
 * The screens of spec §3, plus ENDED (the session's own lifetime ran out: EXPIRED with no retry) and
 * CONFIRM_CANCEL (the payer asked to close while a transfer may be on its way: asked first).
 */
export type Screen =
  | 'initializing'
  | 'awaiting'
  | 'confirming'
  | 'confirm-cancel'
  | 'success'
  | 'mismatch'
  | 'expired'
  | 'ended'
  | 'cancelled'
  | 'error';

/** What a screen shows: the checkout's state as `<servicepay-frame-app>` holds it. */
export interface ScreenView {
  screen: Screen;
  session: PublicSession | undefined;
  account: VirtualAccount | undefined;
  mismatch: Mismatch | undefined;
  /** Until the account expires, on the service's clock. */
  remainingMs: number;
  /** The payer's words on the ERROR screen. */
  errorMessage: string;
  /** ERROR after a lost stream: **Try again** reconnects it. */
  canReconnect: boolean;
  /** A call is on its way: the buttons that would start another wait. */
  busy: boolean;
  copyState: 'idle' | 'copied' | 'failed';
}

/** What the screens' buttons do (the element's own methods). */
export interface ScreenActions {
  sentMoney(): void;
  showDetails(): void;
  copy(): void;
  retry(): void;
  requestClose(): void;
  keepPaying(): void;
  cancelPayment(): void;
  reconnect(): void;
  /** Back to the merchant from a final screen (an ERROR's pending outcome is reported first). */
  leave(): void;
  /** Back to the merchant at once (SUCCESS, CANCELLED). */
  close(): void;
}

/**
 * The screen the checkout shows now (one `<h1>` each, focused when it appears), from its state and the
 * actions its buttons call: one render function per screen (`SCREENS`). The element keeps the state; this only
 * draws it.
 *
 * @example
 * render(html`<main>${renderScreen(view, actions)}</main>`, root);
 */
export function renderScreen(view: ScreenView, act: ScreenActions): TemplateResult {
  return SCREENS[view.screen](view, act);
}

const SCREENS: Record<Screen, (view: ScreenView, act: ScreenActions) => TemplateResult> = {
  initializing: renderInitializing,
  awaiting: renderAwaiting,
  confirming: renderConfirming,
  success: renderSuccess,
  mismatch: renderMismatch,
  expired: renderExpired,
  'confirm-cancel': renderConfirmCancel,
  ended: renderEnded,
  cancelled: renderCancelled,
  error: renderError,
};

/**
 * The header above every screen once the session is known: who is paid, how much, and TEST in test mode.
 *
 * @example
 * html`${renderHeader(session)}<main>…</main>`
 */
export function renderHeader(session: PublicSession | undefined): TemplateResult | typeof nothing {
  if (!session) return nothing;
  return html`<header>
    <p class="merchant">${texts.payWith(session.merchantName)}</p>
    <p class="amount">${formatAmount(session.amount, session.currency)}</p>
    ${session.environment === 'test' ? html`<span class="badge">${texts.testBadge}</span>` : nothing}
  </header>`;
}

/**
 * What the screen reader hears when the checkout turns to `screen` (the polite live region).
 *
 * @example
 * this.announcement = announcementOf('success');
 */
export function announcementOf(screen: Screen): string {
  const announcements: Partial<Record<Screen, string>> = {
    awaiting: texts.announce.awaiting,
    confirming: texts.announce.confirming,
    success: texts.announce.success,
    mismatch: texts.announce.mismatch,
    expired: texts.announce.expired,
    'confirm-cancel': texts.announce.confirmCancel,
    ended: texts.sessionEndedTitle,
    cancelled: texts.announce.cancelled,
    error: texts.announce.error,
  };
  return announcements[screen] ?? '';
}

const amountOf = (view: ScreenView): string =>
  view.session ? formatAmount(view.session.amount, view.session.currency) : '';

/**
 * The button back to the merchant, by name where the session has one: the same words on every screen that has
 * it, on a shop's page and on the hosted checkout (which has no shop).
 */
function backTo(view: ScreenView): string {
  const merchant = view.session?.merchantName ?? '';
  return merchant ? texts.backToMerchant(merchant) : texts.backToMerchantPlain;
}

/** INITIALIZING: the client secret is being exchanged. */
function renderInitializing(_view: ScreenView, _act: ScreenActions): TemplateResult {
  return html`<div class="center" aria-busy="true">
    <div class="spinner" aria-hidden="true"></div>
    <h1 tabindex="-1">${texts.initializing}</h1>
  </div>`;
}

/** AWAITING_PAYMENT: the account to transfer the exact amount to, and the countdown. */
function renderAwaiting(view: ScreenView, act: ScreenActions): TemplateResult {
  const amount = amountOf(view);
  return html`<h1 tabindex="-1">${texts.transferExactly} ${amount} ${texts.toThisAccount}</h1>
    ${renderAccount(view, act)} ${renderCountdown(view)}
    <p class="note">${texts.singleUse}</p>
    <div class="actions">
      <button type="button" class="primary" @click=${act.sentMoney}>${texts.sentMoney}</button>
    </div>`;
}

/** CONFIRMING: the payer said the money is on its way; the checkout waits for the bank. */
function renderConfirming(view: ScreenView, act: ScreenActions): TemplateResult {
  return html`<div class="center">
      <div class="pulse" aria-hidden="true"></div>
      <h1 tabindex="-1">${texts.confirmingTitle}</h1>
      <p class="lead">${texts.confirmingBody}</p>
    </div>
    ${renderCountdown(view)}
    <div class="actions">
      <button type="button" class="secondary" @click=${act.showDetails}>${texts.showDetails}</button>
    </div>`;
}

/** SUCCESS: paid; back to the merchant by itself after a moment. */
function renderSuccess(view: ScreenView, act: ScreenActions): TemplateResult {
  const amount = amountOf(view);
  const merchant = view.session?.merchantName ?? '';
  return html`<div class="center">
      <div class="icon ok" aria-hidden="true">✓</div>
      <h1 tabindex="-1">${texts.successTitle}</h1>
      <p class="lead">${texts.successBody(amount, merchant)}</p>
      <p class="note">${texts.successRedirect}</p>
    </div>
    <div class="actions">
      <button type="button" class="primary" @click=${act.close}>${texts.continue}</button>
    </div>`;
}

/** MISMATCH: a transfer of another amount came back; the exact amount is asked again. */
function renderMismatch(view: ScreenView, act: ScreenActions): TemplateResult {
  const amount = amountOf(view);
  const currency = view.session?.currency ?? 'NGN';
  const expected = view.mismatch ? formatAmount(view.mismatch.expectedAmount, currency) : amount;
  const received = view.mismatch ? formatAmount(view.mismatch.receivedAmount, currency) : '';
  return html`<h1 tabindex="-1">${texts.mismatchTitle}</h1>
    <p class="lead">${texts.mismatchBody(expected, received)}</p>
    <dl class="compare">
      <div><dt>${texts.expected}</dt><dd>${expected}</dd></div>
      <div><dt>${texts.received}</dt><dd>${received}</dd></div>
    </dl>
    <p>${texts.mismatchRetry(expected)}</p>
    ${renderAccount(view, act)} ${renderCountdown(view)}`;
}

/** EXPIRED: the account's countdown ran out with no transfer; a new account may be asked for. */
function renderExpired(view: ScreenView, act: ScreenActions): TemplateResult {
  return html`<div class="center">
      <div class="icon warn" aria-hidden="true">!</div>
      <h1 tabindex="-1">${texts.expiredTitle}</h1>
      <p class="lead">${texts.expiredBody}</p>
    </div>
    <div class="actions">
      <button type="button" class="primary" ?disabled=${view.busy} @click=${act.retry}>
        ${texts.newAccount}
      </button>
      <button type="button" class="secondary" ?disabled=${view.busy} @click=${act.requestClose}>
        ${backTo(view)}
      </button>
    </div>`;
}

/** CONFIRM_CANCEL: the payer asked to close while a transfer may be on its way. */
function renderConfirmCancel(view: ScreenView, act: ScreenActions): TemplateResult {
  return html`<div class="center">
      <div class="icon warn" aria-hidden="true">?</div>
      <h1 tabindex="-1">${texts.confirmCancelTitle}</h1>
      <p class="lead">${texts.confirmCancelBody}</p>
    </div>
    ${renderCountdown(view)}
    <div class="actions">
      <button type="button" class="primary" ?disabled=${view.busy} @click=${act.keepPaying}>
        ${texts.keepPaying}
      </button>
      <button type="button" class="secondary" ?disabled=${view.busy} @click=${act.cancelPayment}>
        ${texts.cancelPayment}
      </button>
    </div>`;
}

/**
 * ENDED: the session's own lifetime ran out with no transfer. Its one button is the others' way back (the
 * overlay closes; the hosted page goes where the session's return goes).
 */
function renderEnded(view: ScreenView, act: ScreenActions): TemplateResult {
  const back = backTo(view);
  return html`<div class="center">
      <div class="icon warn" aria-hidden="true">!</div>
      <h1 tabindex="-1">${texts.sessionEndedTitle}</h1>
      <p class="lead">${texts.sessionEndedBody}</p>
    </div>
    <div class="actions">
      <button type="button" class="primary" @click=${act.leave}>
        ${back}
      </button>
    </div>`;
}

/** CANCELLED: the payer (or the merchant) cancelled the session. */
function renderCancelled(view: ScreenView, act: ScreenActions): TemplateResult {
  const back = backTo(view);
  return html`<div class="center">
      <div class="icon bad" aria-hidden="true">×</div>
      <h1 tabindex="-1">${texts.cancelledTitle}</h1>
      <p class="lead">${texts.cancelledBody}</p>
    </div>
    <div class="actions">
      <button type="button" class="primary" @click=${act.close}>
        ${back}
      </button>
    </div>`;
}

/** ERROR: the payer's words, and **Try again** after a lost stream. */
function renderError(view: ScreenView, act: ScreenActions): TemplateResult {
  const back = backTo(view);
  const canReconnect = view.canReconnect;
  return html`<div class="center">
      <div class="icon bad" aria-hidden="true">!</div>
      <h1 tabindex="-1">${texts.errorTitle}</h1>
      <p class="lead">${view.errorMessage}</p>
    </div>
    <div class="actions">
      ${
        canReconnect
          ? html`<button type="button" class="primary" @click=${act.reconnect}>${texts.reconnect}</button>`
          : nothing
      }
      <button type="button" class=${canReconnect ? 'secondary' : 'primary'} @click=${act.leave}>
        ${back}
      </button>
    </div>`;
}

/** The account's details with its copy button (AWAITING_PAYMENT, MISMATCH). */
function renderAccount(view: ScreenView, act: ScreenActions): TemplateResult | typeof nothing {
  const account = view.account;
  if (!account) return nothing;
  const copyText =
    view.copyState === 'copied' ? texts.copied : view.copyState === 'failed' ? texts.copyFailed : texts.copy;
  return html`<dl class="details">
    <div class="row"><dt>${texts.bank}</dt><dd>${account.bankName}</dd></div>
    <div class="row">
      <dt>${texts.accountNumber}</dt>
      <dd class="number">
        <span class="digits">${account.accountNumber}</span>
        <button type="button" class="copy" aria-label=${texts.copyLabel(account.accountNumber)} @click=${act.copy}>
          ${copyText}
        </button>
      </dd>
    </div>
    <div class="row"><dt>${texts.accountName}</dt><dd>${account.accountName}</dd></div>
  </dl>`;
}

/** The countdown: not read out every second (`aria-live="off"`); the milestones are announced instead. */
function renderCountdown(view: ScreenView): TemplateResult {
  const remaining = view.remainingMs;
  return html`<p class=${remaining < 5 * 60_000 ? 'countdown low' : 'countdown'} role="timer" aria-live="off">
    <span>${texts.countdownLabel}</span><strong>${formatCountdown(remaining)}</strong>
  </p>`;
}
