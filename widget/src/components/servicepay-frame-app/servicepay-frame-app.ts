import type {
  BootstrapResult,
  PublicSession,
  StatusMessage,
  VirtualAccount,
} from '@servicepay/node/protocol';
import { html, LitElement, type PropertyValues } from 'lit';
import type { FrameConfig } from '../../frame/frame-config.ts';
import type { StreamState } from '../../frame/status-stream.ts';
import type { FrameMessage } from '../../protocol/messages.ts';
import { developerTexts, frameTexts as texts } from '../../texts.ts';
import { BootstrapController } from './bootstrap-controller.ts';
import { CheckoutOutcome } from './checkout-outcome.ts';
import { CopyController } from './copy-controller.ts';
import { CountdownController } from './countdown-controller.ts';
import {
  announcementOf,
  renderHeader,
  renderScreen,
  type Screen,
  type ScreenActions,
} from './frame-screens.ts';
import { frameAppStyles } from './servicepay-frame-app.styles.ts';
import { SessionCallsController } from './session-calls-controller.ts';
import { StatusStreamController } from './status-stream-controller.ts';

export type { Screen } from './frame-screens.ts';

/** Screens where money may be on its way to a live account: closing asks first. */
const PAYING: readonly Screen[] = ['awaiting', 'confirming', 'mismatch'];

/**
 * `<servicepay-frame-app>`: the checkout screens inside the sandboxed frame. It exchanges the client secret
 * once, shows the account, follows the push stream, and tells the host (over the port) only what the merchant
 * may know: how the checkout ended, exactly once (success with `{ id, reference, status }`, cancelled, or an
 * error with a message for the developer; the payer reads their own words on the ERROR screen), and when to
 * close. Its long-lived parts are Lit reactive controllers: `BootstrapController` (the secret's exchange),
 * `CountdownController` (the account's clock), `StatusStreamController` (the push stream),
 * `SessionCallsController` (cancel, new account) and `CopyController`; the element keeps the checkout's state and decides what the payer sees (`renderScreen`, one function per screen).
 *
 * @example
 * const app = document.createElement('servicepay-frame-app');
 * app.config = readFrameConfig(document);
 * app.post = (message) => port.postMessage(message);
 * document.body.append(app);
 * app.start('cs_test_…');
 */
export class ServicePayFrameApp extends LitElement {
  static override styles = frameAppStyles;
  static override properties = {
    screen: { state: true },
    session: { state: true },
    account: { state: true },
    mismatch: { state: true },
    errorMessage: { state: true },
    announcement: { state: true },
  };

  declare screen: Screen;
  declare session: PublicSession | undefined;
  declare account: VirtualAccount | undefined;
  declare mismatch: { expectedAmount: number; receivedAmount: number } | undefined;
  declare errorMessage: string;
  declare announcement: string;

  /** Set by the frame entry before `start`. */
  config!: FrameConfig;
  /** Sends a message to the host; set by the frame entry. */
  post: (message: FrameMessage) => void = () => undefined;

  private readonly bootstrap = new BootstrapController(this, () => this.config, {
    onReady: (result) => this.onReady(result),
    onFailed: (payer, developer) => this.fail(payer, developer),
  });
  private readonly countdown = new CountdownController(
    this,
    {
      expiresAt: () => this.account?.expiresAt,
      clockOffsetMs: () => this.bootstrap.api?.clockOffsetMs ?? 0,
    },
    (remainingMs) => this.onTick(remainingMs),
  );
  private readonly stream = new StatusStreamController(this, {
    onMessage: (message) => this.onStatus(message),
    onLost: () => {
      if (!this.isFinal()) this.fail(texts.connectionLost, developerTexts.streamLost(this.session?.id ?? ''));
    },
    onRefused: (status) => {
      if (!this.isFinal())
        this.fail(
          texts.followingStopped(this.session?.merchantName ?? ''),
          developerTexts.streamRefused(this.session?.id ?? '', status),
        );
    },
  });
  private readonly calls = new SessionCallsController(this, this.bootstrap, (payer, developer) =>
    this.fail(payer, developer),
  );
  private readonly outcome = new CheckoutOutcome((message) => this.post(message));
  private readonly copier = new CopyController(this, () => this.renderRoot.querySelector('.digits'));
  private closeAfterBootstrap = false;
  /** The paying screen the cancel question came from, to go back to. */
  private beforeCancelQuestion: Screen = 'awaiting';
  private markedAccount = false;

  constructor() {
    super();
    this.screen = 'initializing';
    this.session = undefined;
    this.account = undefined;
    this.mismatch = undefined;
    this.errorMessage = '';
    this.announcement = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('keydown', this.onKeydown);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('keydown', this.onKeydown);
    this.outcome.dispose();
  }

  /** Where the push stream is (`lost` offers the payer a reconnect); read by the browser tests. */
  get streamState(): StreamState {
    return this.stream.state;
  }

  /** Starts the checkout: checks the secret against this host's environment, then exchanges it once. */
  start(clientSecret: string): void {
    this.bootstrap.start(clientSecret);
  }

  /**
   * The payer asked to close (Escape, the overlay's close control, or a button here). On a final screen the
   * overlay closes; on a paying screen the payer is asked first (a transfer may be on its way); on the cancel
   * question it means "no, keep paying"; otherwise the session is cancelled on the service.
   */
  requestClose = async (): Promise<void> => {
    if (this.calls.cancelling) return;
    if (['success', 'cancelled', 'ended', 'error'].includes(this.screen)) {
      this.outcome.leave();
      return;
    }
    if (PAYING.includes(this.screen)) {
      this.beforeCancelQuestion = this.screen;
      this.show('confirm-cancel');
      return;
    }
    if (this.screen === 'confirm-cancel') {
      this.keepPaying();
      return;
    }
    if (this.screen === 'initializing' && !this.bootstrap.token) {
      if (!this.bootstrap.started) {
        this.outcome.report({ type: 'cancelled' });
        this.outcome.close();
        return;
      }
      this.closeAfterBootstrap = true;
      return;
    }
    await this.cancelSession();
  };

  /** The secret was exchanged: the account is shown, its clock runs and the stream opens. */
  private async onReady(result: BootstrapResult): Promise<void> {
    this.session = result.session;
    this.account = result.virtualAccount;
    this.countdown.start();
    const path = `/api/widget/sessions/${encodeURIComponent(result.session.id)}/events`;
    this.stream.open(`${this.config.apiUrl}${path}`, result.token);
    if (this.closeAfterBootstrap) {
      await this.cancelSession();
      return;
    }
    this.show('awaiting');
  }

  private isFinal(): boolean {
    return this.screen === 'success' || this.screen === 'cancelled' || this.screen === 'ended';
  }

  private onStatus(message: StatusMessage): void {
    this.session = message.session;
    if (message.virtualAccount) this.account = message.virtualAccount;
    switch (message.status) {
      case 'successful':
        this.succeed();
        return;
      case 'cancelled':
        this.showCancelled();
        return;
      case 'expired':
        this.end();
        return;
      case 'pending':
        if (message.reason === 'account_expired') this.show('expired');
        return;
      case 'mismatch':
        this.mismatch = message.mismatch ?? undefined;
        this.show('mismatch');
        return;
      case 'awaiting_payment':
        // A reconnect after ERROR, a new account, or the stream's first message: back to the details,
        // unless the payer already said the money is on its way, or is being asked about cancelling.
        if (['confirming', 'mismatch', 'confirm-cancel'].includes(this.screen)) return;
        if (this.screen === 'initializing' || this.screen === 'error' || this.screen === 'expired') {
          if (this.countdown.remainingMs() > 0) this.show('awaiting');
        }
        return;
      default:
        return;
    }
  }

  private succeed(): void {
    const session = this.session;
    if (!session) return;
    this.show('success');
    this.outcome.report({
      type: 'success',
      payment: { id: session.id, reference: session.reference, status: 'successful' },
    });
    this.outcome.closeSoon();
  }

  private showCancelled(): void {
    if (this.screen === 'success') return;
    this.show('cancelled');
    this.outcome.report({ type: 'cancelled' });
    this.outcome.closeSoon();
  }

  /** The session's lifetime ran out with no transfer: ENDED, and the checkout ends without a payment. */
  private end(): void {
    if (this.screen === 'success' || this.screen === 'cancelled') return;
    this.show('ended');
    this.outcome.report({ type: 'cancelled' });
  }

  /**
   * ERROR: the payer reads `payer`, the developer gets `developer` through `onError`: at once when no account
   * was shown yet, else when the payer leaves the screen (the stream may still bring the payment first).
   */
  private fail(payer: string, developer: string): void {
    this.errorMessage = payer;
    this.show('error');
    if (this.screen !== 'error' || this.outcome.settled) return;
    if (this.bootstrap.token) this.outcome.holdError(developer);
    else this.outcome.report({ type: 'error', message: developer });
  }

  /** "Keep paying" (or Escape, or the close control) on the cancel question: back to where the payer was. */
  private keepPaying(): void {
    if (this.screen !== 'confirm-cancel') return;
    this.show(this.countdown.remainingMs() > 0 ? this.beforeCancelQuestion : 'expired');
  }

  private async cancelSession(): Promise<void> {
    const session = this.session;
    if (session && (await this.calls.cancel(session.id))) this.showCancelled();
  }

  /** A new account after the old one expired. A 409 (ended, or paid at its closing) is the stream's to tell. */
  private async retry(): Promise<void> {
    const session = this.session;
    const result = session && (await this.calls.newAccount(session.id));
    if (!result) return;
    this.session = result.session;
    this.account = result.virtualAccount;
    this.mismatch = undefined;
    this.countdown.restart();
    this.show('awaiting');
  }

  private show(screen: Screen): void {
    if (this.screen === screen) return;
    if (this.screen === 'success' || (this.screen === 'cancelled' && screen !== 'success')) return;
    // Back from ERROR (the stream returned): the checkout goes on, so its error is no longer its outcome.
    if (this.screen === 'error') this.outcome.dropHeldError();
    this.screen = screen;
    this.announcement = announcementOf(screen);
  }

  /** Each second of the countdown: EXPIRED when it runs out on a paying screen, else its milestones read out. */
  private onTick(remainingMs: number): void {
    if (remainingMs <= 0 && [...PAYING, 'confirm-cancel'].includes(this.screen)) {
      this.show('expired');
      return;
    }
    if (this.screen !== 'awaiting' && this.screen !== 'mismatch') return;
    const milestone = this.countdown.milestoneReached(remainingMs);
    if (milestone !== undefined) this.announcement = texts.countdownMilestone(milestone);
  }

  private onKeydown = (event: KeyboardEvent): void => {
    if (event.key === 'Escape') {
      event.preventDefault();
      void this.requestClose();
    }
  };

  private async copy(): Promise<void> {
    const number = this.account?.accountNumber;
    if (!number) return;
    const copied = await this.copier.copy(number);
    this.announcement = copied ? texts.copiedAnnouncement : texts.copyFailed;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('screen') && this.screen === 'awaiting' && !this.markedAccount) {
      // User Timing for `npm run bench` and for merchants' own field measurements: the account is in the DOM
      // (`account-shown`), then painted (`account-painted`: a task queued from the next animation frame runs
      // after that frame's paint).
      this.markedAccount = true;
      performance.mark('servicepay:account-shown');
      requestAnimationFrame(() => setTimeout(() => performance.mark('servicepay:account-painted')));
    }
    if (changed.has('screen') && changed.get('screen') !== undefined) {
      // Keyboard and screen-reader users land on the new screen's heading.
      this.renderRoot.querySelector<HTMLElement>('h1')?.focus();
    }
  }

  protected override render() {
    const session = this.session;
    return html`
      ${renderHeader(session)}
      <main>${renderScreen(
        {
          screen: this.screen,
          session,
          account: this.account,
          mismatch: this.mismatch,
          remainingMs: this.countdown.remainingMs(),
          errorMessage: this.errorMessage,
          canReconnect: this.bootstrap.token !== undefined && this.stream.state === 'lost',
          busy: this.calls.busy,
          copyState: this.copier.state,
        },
        this.actions,
      )}</main>
      <p class="sr-only" role="status" aria-live="polite">${this.announcement}</p>
    `;
  }

  /** What the screens' buttons do. */
  private readonly actions: ScreenActions = {
    sentMoney: () => this.show('confirming'),
    showDetails: () => {
      this.screen = 'awaiting';
    },
    copy: () => void this.copy(),
    retry: () => void this.retry(),
    requestClose: () => void this.requestClose(),
    keepPaying: () => this.keepPaying(),
    cancelPayment: () => void this.cancelSession(),
    reconnect: () => this.stream.reconnectNow(),
    leave: () => this.outcome.leave(),
    close: () => this.outcome.close(),
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'servicepay-frame-app': ServicePayFrameApp;
  }
}
