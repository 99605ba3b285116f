import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { CancelEvent } from '../../events/cancel-event.ts';
import { CheckoutClosedEvent } from '../../events/checkout-closed-event.ts';
import { CheckoutErrorEvent } from '../../events/checkout-error-event.ts';
import { SuccessEvent } from '../../events/success-event.ts';
import { scriptOrigin } from '../../loader/script-origin.ts';
import { lockScroll } from '../../loader/scroll-lock.ts';
import {
  type ConnectMessage,
  type HostMessage,
  PROTOCOL_VERSION,
  parseFrameMessage,
  parseHelloMessage,
} from '../../protocol/messages.ts';
import { hostTexts as texts } from '../../texts.ts';
import { WIDGET_VERSION } from '../../version.ts';
import { checkoutStyles } from './servicepay-checkout.styles.ts';

/** How long the frame may take to load and answer before the overlay gives up with an error. */
const FRAME_TIMEOUT_MS = 15_000;

type Phase = 'idle' | 'open' | 'failed' | 'closed';

const randomNonce = (): string => {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
};

/**
 * `<servicepay-checkout client-secret="cs_…">`: the checkout overlay. Connected with a client secret, it opens
 * a modal dialog (top layer, above any z-index) holding the sandboxed checkout frame from the widget host that
 * served this script, locks the page's scroll and moves focus in; when the checkout ends it gives focus back,
 * unlocks, removes the frame and fires `servicepay-close`. Events: exactly one of `servicepay-success`,
 * `servicepay-cancel` and `servicepay-error` (none when the page itself closes it), then `servicepay-close`.
 * `ServicePay.init` is this element plus callbacks.
 *
 * @example
 * const checkout = document.createElement('servicepay-checkout');
 * checkout.setAttribute('client-secret', clientSecret);
 * checkout.addEventListener('servicepay-success', (event) => location.assign(`/thanks/${event.payment.reference}`));
 * checkout.addEventListener('servicepay-close', () => checkout.remove());
 * document.body.append(checkout);
 */
export class ServicePayCheckout extends LitElement {
  static override styles = checkoutStyles;
  static override properties = {
    clientSecret: { type: String, attribute: 'client-secret' },
    phase: { state: true },
  };

  declare clientSecret: string | undefined;
  declare phase: Phase;

  private readonly channelNonce = randomNonce();
  private port: MessagePort | undefined;
  private unlockScroll: (() => void) | undefined;
  private returnFocus: Element | null = null;
  private frameTimer: ReturnType<typeof setTimeout> | undefined;
  private connected = false;
  private started = false;
  /** The checkout's one outcome, once fired: every later success, cancel or error is dropped. */
  private outcome: 'success' | 'cancelled' | 'error' | undefined;
  /** What the overlay shows the payer when it could not open the checkout. */
  private failedText: string = texts.frameFailed;

  constructor() {
    super();
    this.clientSecret = undefined;
    this.phase = 'idle';
  }

  /** Closes the overlay at once without cancelling the session (what `ServicePay.close()` does). */
  close(): void {
    this.finish();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.phase === 'idle') {
      const origin = scriptOrigin();
      if (!origin) {
        this.fail(texts.checkoutUnavailable, texts.noScriptOrigin);
        return;
      }
      if (!this.clientSecret) {
        this.fail(texts.checkoutUnavailable, texts.missingSecret);
        return;
      }
      this.phase = 'open';
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    // Removed from the page while open: tear down like close(), so nothing is left behind.
    if (this.phase === 'open' || this.phase === 'failed') this.finish();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('phase') && (this.phase === 'open' || this.phase === 'failed')) {
      const dialog = this.renderRoot.querySelector('dialog');
      if (dialog && !dialog.open) {
        if (this.phase === 'open') window.addEventListener('message', this.onWindowMessage);
        this.returnFocus = document.activeElement;
        dialog.showModal();
        this.unlockScroll = lockScroll();
      }
      if (this.phase === 'open' && !this.frameTimer && !this.connected) {
        this.frameTimer = setTimeout(() => this.frameFailed(), FRAME_TIMEOUT_MS);
      }
      if (this.phase === 'failed')
        this.renderRoot.querySelector<HTMLButtonElement>('.failed button')?.focus();
    }
  }

  protected override render() {
    if (this.phase !== 'open' && this.phase !== 'failed') return nothing;
    const origin = scriptOrigin() ?? '';
    return html`<dialog
      aria-label=${texts.dialogLabel}
      @cancel=${this.onDialogCancel}
      @close=${this.onDialogClose}
    >
      <div class="card">
        ${
          this.phase === 'open'
            ? html`<iframe
                title=${texts.frameTitle}
                src=${`${origin}/v${WIDGET_VERSION}/frame.html#n=${this.channelNonce}&o=${encodeURIComponent(location.origin)}`}
                sandbox="allow-scripts allow-same-origin"
                allow="clipboard-write"
                referrerpolicy="no-referrer"
              ></iframe>`
            : html`<div class="failed" role="alert">
                <p>${this.failedText}</p>
                <button type="button" @click=${this.finish}>${texts.backToMerchantPlain}</button>
              </div>`
        }
        <button type="button" class="close" aria-label=${texts.close} @click=${this.requestClose}>
          <svg viewBox="0 0 20 20" aria-hidden="true" focusable="false">
            <path d="M5 5l10 10M15 5L5 15" stroke="currentColor" stroke-width="2" stroke-linecap="round" fill="none" />
          </svg>
        </button>
      </div>
    </dialog>`;
  }

  /** The frame's hello: from the widget host's origin, from our iframe's window, with our nonce. */
  private onWindowMessage = (event: MessageEvent): void => {
    const origin = scriptOrigin();
    const target = this.renderRoot.querySelector('iframe')?.contentWindow;
    if (this.port || !origin || !target || event.origin !== origin || event.source !== target) return;
    const hello = parseHelloMessage(event.data);
    if (!hello || hello.nonce !== this.channelNonce) return;
    window.removeEventListener('message', this.onWindowMessage);
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (message) => this.onFrameMessage(message.data);
    const connect: ConnectMessage = {
      kind: 'servicepay:connect',
      protocol: PROTOCOL_VERSION,
      nonce: this.channelNonce,
    };
    // The exact origin: the browser delivers it only if the frame still holds the widget host's page.
    target.postMessage(connect, origin, [channel.port2]);
    // The port queues it until the frame listens: no round trip before the bootstrap starts.
    if (this.clientSecret) {
      this.connected = true;
      this.started = true;
      clearTimeout(this.frameTimer);
      this.send({ type: 'start', clientSecret: this.clientSecret });
    }
  };

  private onFrameMessage(data: unknown): void {
    const message = parseFrameMessage(data);
    if (!message || this.phase !== 'open') return;
    switch (message.type) {
      case 'ready':
        this.renderRoot.querySelector('iframe')?.focus();
        return;
      case 'success':
        this.settle('success', new SuccessEvent(message.payment));
        return;
      case 'cancelled':
        this.settle('cancelled', new CancelEvent());
        return;
      case 'error':
        this.settle('error', new CheckoutErrorEvent(message.message));
        return;
      case 'close':
        this.finish();
        return;
    }
  }

  /** Fires the checkout's outcome, if it has none yet: one callback per checkout, whatever the frame says. */
  private settle(outcome: NonNullable<typeof this.outcome>, event: Event): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.dispatchEvent(event);
  }

  private send(message: HostMessage): void {
    this.port?.postMessage(message);
  }

  private requestClose = (): void => {
    if (this.phase === 'open' && this.started) {
      this.send({ type: 'close-requested' });
      return;
    }
    // Nothing was exchanged yet (the frame is still loading): there is no session to cancel.
    if (this.phase === 'open') this.settle('cancelled', new CancelEvent());
    this.finish();
  };

  private onDialogCancel = (event: Event): void => {
    // Escape: the checkout decides (cancel the session first), so the dialog stays until it says close.
    event.preventDefault();
    this.requestClose();
  };

  private onDialogClose = (event: Event): void => {
    // The browser closed the dialog itself (a repeated Escape is not always cancelable): keep it modal and
    // treat it as the payer's close request.
    if (this.phase !== 'open') return;
    const dialog = event.currentTarget as HTMLDialogElement;
    if (dialog.isConnected) dialog.showModal();
    this.requestClose();
  };

  private frameFailed(): void {
    this.frameTimer = undefined;
    if (this.phase !== 'open' || this.connected) return;
    this.fail(texts.frameFailed, texts.frameUnavailable(scriptOrigin() ?? 'the widget host'));
  }

  /** The overlay could not open the checkout: the payer reads `payerText`, the developer gets `developerText`. */
  private fail(payerText: string, developerText: string): void {
    this.failedText = payerText;
    this.phase = 'failed';
    this.settle('error', new CheckoutErrorEvent(developerText));
  }

  private finish = (): void => {
    if (this.phase === 'closed') return;
    const wasShown = this.phase === 'open' || this.phase === 'failed';
    this.phase = 'closed';
    clearTimeout(this.frameTimer);
    window.removeEventListener('message', this.onWindowMessage);
    this.port?.close();
    this.port = undefined;
    const dialog = this.renderRoot.querySelector('dialog');
    if (dialog?.open) dialog.close();
    this.unlockScroll?.();
    this.unlockScroll = undefined;
    if (wasShown && this.returnFocus instanceof HTMLElement && this.returnFocus.isConnected) {
      this.returnFocus.focus();
    }
    this.returnFocus = null;
    this.dispatchEvent(new CheckoutClosedEvent());
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'servicepay-checkout': ServicePayCheckout;
  }
  interface HTMLElementEventMap {
    'servicepay-success': SuccessEvent;
    'servicepay-error': CheckoutErrorEvent;
    'servicepay-cancel': CancelEvent;
    'servicepay-close': CheckoutClosedEvent;
  }
}
