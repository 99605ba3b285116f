import type { PublicSession, StatusMessage, VirtualAccount } from '@servicepay/node/protocol';
import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { ApiError, CheckoutApi } from '../../frame/api-client.ts';
import { COUNTDOWN_MILESTONES, formatAmount } from '../../frame/format.ts';
import type { FrameConfig } from '../../frame/frame-config.ts';
import { StatusStream, type StreamState } from '../../frame/status-stream.ts';
import type { FrameMessage } from '../../protocol/messages.ts';
import { developerTexts, frameTexts as texts } from '../../texts.ts';
import { renderScreen, type Screen, type ScreenActions } from './frame-screens.ts';
import { frameAppStyles } from './servicepay-frame-app.styles.ts';

export type { Screen } from './frame-screens.ts';

/** The one callback a checkout ends with (docs/protocol.md, "How a checkout ends"). */
type Outcome = Extract<FrameMessage, { type: 'success' | 'cancelled' | 'error' }>;

/** Screens where money may be on its way to a live account: closing asks first. */
const PAYING: readonly Screen[] = ['awaiting', 'confirming', 'mismatch'];

/** SUCCESS (spec §8) and CANCELLED go back to the merchant by themselves after this long. */
const AUTO_RETURN_MS = 3_000;

/**
 * `<servicepay-frame-app>`: the checkout screens inside the sandboxed frame. It exchanges the client secret
 * once, shows the account, follows the push stream, and tells the host (over the port) only what the merchant
 * may know: how the checkout ended, exactly once (success with `{ id, reference, status }`, cancelled, or an
 * error with a message for the developer; the payer reads their own words on the ERROR screen), and when to
 * close.
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
    now: { state: true },
    errorMessage: { state: true },
    streamState: { state: true },
    busy: { state: true },
    copyState: { state: true },
    announcement: { state: true },
  };

  declare screen: Screen;
  declare session: PublicSession | undefined;
  declare account: VirtualAccount | undefined;
  declare mismatch: { expectedAmount: number; receivedAmount: number } | undefined;
  declare now: number;
  declare errorMessage: string;
  declare streamState: StreamState;
  declare busy: boolean;
  declare copyState: 'idle' | 'copied' | 'failed';
  declare announcement: string;

  /** Set by the frame entry before `start`. */
  config!: FrameConfig;
  /** Sends a message to the host; set by the frame entry. */
  post: (message: FrameMessage) => void = () => undefined;

  private api: CheckoutApi | undefined;
  private token: string | undefined;
  private stream: StatusStream | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private returnTimer: ReturnType<typeof setTimeout> | undefined;
  private copyTimer: ReturnType<typeof setTimeout> | undefined;
  private announcedMilestones = new Set<number>();
  private bootstrapping: Promise<void> | undefined;
  private closeAfterBootstrap = false;
  private cancelling = false;
  /** How the checkout ended, once reported: no second callback ever follows the first. */
  private outcome: Outcome['type'] | undefined;
  /**
   * An ERROR reached after the account was shown: the payment may still land (the stream can come back with
   * it), so its `onError` waits until the payer leaves the ERROR screen. The developer's message.
   */
  private pendingError: string | undefined;
  /** The paying screen the cancel question came from, to go back to. */
  private beforeCancelQuestion: Screen = 'awaiting';
  private markedAccount = false;

  constructor() {
    super();
    this.screen = 'initializing';
    this.session = undefined;
    this.account = undefined;
    this.mismatch = undefined;
    this.now = Date.now();
    this.errorMessage = '';
    this.streamState = 'connecting';
    this.busy = false;
    this.copyState = 'idle';
    this.announcement = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener('visibilitychange', this.onVisibility);
    window.addEventListener('online', this.onOnline);
    window.addEventListener('keydown', this.onKeydown);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener('visibilitychange', this.onVisibility);
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('keydown', this.onKeydown);
    this.stream?.stop();
    clearInterval(this.ticker);
    clearTimeout(this.returnTimer);
    clearTimeout(this.copyTimer);
  }

  /** Starts the checkout: checks the secret against this host's environment, then exchanges it once. */
  start(clientSecret: string): void {
    if (this.bootstrapping) return;
    const api = new CheckoutApi(this.config.apiUrl);
    this.api = api;
    const secretEnvironment = clientSecret.startsWith('cs_live_') ? 'live' : 'test';
    if (secretEnvironment !== this.config.environment) {
      // Before the secret is spent: the right host can still use it.
      const rightHost = secretEnvironment === 'live' ? this.config.liveHost : this.config.testHost;
      this.fail(
        texts.cannotOpen,
        developerTexts.wrongHost(
          secretEnvironment === 'live' ? 'live' : 'test',
          this.config.environment === 'live' ? 'production' : 'test',
          rightHost,
        ),
      );
      return;
    }
    this.bootstrapping = this.bootstrap(api, clientSecret);
  }

  /**
   * The payer asked to close (Escape, the overlay's close control, or a button here). On a final screen the
   * overlay closes; on a paying screen the payer is asked first (a transfer may be on its way); on the cancel
   * question it means "no, keep paying"; otherwise the session is cancelled on the service.
   */
  requestClose = async (): Promise<void> => {
    if (this.cancelling) return;
    if (['success', 'cancelled', 'ended', 'error'].includes(this.screen)) {
      this.leave();
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
    if (this.screen === 'initializing' && !this.token) {
      if (!this.bootstrapping) {
        this.reportCancelled();
        this.post({ type: 'close' });
        return;
      }
      this.closeAfterBootstrap = true;
      return;
    }
    await this.cancelSession();
  };

  private async bootstrap(api: CheckoutApi, clientSecret: string): Promise<void> {
    try {
      const result = await api.bootstrap(clientSecret);
      this.token = result.token;
      this.session = result.session;
      this.account = result.virtualAccount;
      this.startTicker();
      this.openStream();
      if (this.closeAfterBootstrap) {
        await this.cancelSession();
        return;
      }
      this.show('awaiting');
    } catch (error) {
      const [payer, developer] = this.bootstrapFailure(error);
      this.fail(payer, developer);
    }
  }

  /** What the payer reads, and what the developer reads, when the client secret could not be exchanged. */
  private bootstrapFailure(error: unknown): [payer: string, developer: string] {
    if (!(error instanceof ApiError)) {
      return [texts.networkError, developerTexts.unreachable('the checkout', this.config.apiUrl)];
    }
    const developer = developerTexts.refused(
      'POST /api/widget/bootstrap',
      error.status,
      error.code,
      error.message,
    );
    switch (error.code) {
      case 'invalid_client_secret':
        return [texts.linkInvalid, developer];
      case 'client_secret_already_used':
        return [texts.linkUsed, developer];
      case 'client_secret_expired':
        return [texts.linkEnded, developer];
      default:
        return [error.status >= 500 ? texts.serviceError : texts.cannotOpen, developer];
    }
  }

  private openStream(): void {
    const session = this.session;
    const token = this.token;
    if (!session || !token) return;
    this.stream = new StatusStream({
      url: `${this.config.apiUrl}/api/widget/sessions/${encodeURIComponent(session.id)}/events`,
      token,
      onMessage: (message) => this.onStatus(message),
      onState: (state) => {
        this.streamState = state;
        if (state === 'lost' && !this.isFinal())
          this.fail(texts.connectionLost, developerTexts.streamLost(session.id));
      },
      onRefused: (status) => {
        if (!this.isFinal())
          this.fail(texts.followingStopped, developerTexts.streamRefused(session.id, status));
      },
    });
    this.stream.start();
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
          if (this.remainingMs() > 0) this.show('awaiting');
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
    this.report({
      type: 'success',
      payment: { id: session.id, reference: session.reference, status: 'successful' },
    });
    clearTimeout(this.returnTimer);
    this.returnTimer = setTimeout(() => this.post({ type: 'close' }), AUTO_RETURN_MS);
  }

  private showCancelled(): void {
    if (this.screen === 'success') return;
    this.show('cancelled');
    this.reportCancelled();
    clearTimeout(this.returnTimer);
    this.returnTimer = setTimeout(() => this.post({ type: 'close' }), AUTO_RETURN_MS);
  }

  /** The session's lifetime ran out with no transfer: ENDED, and the checkout ends without a payment. */
  private end(): void {
    if (this.screen === 'success' || this.screen === 'cancelled') return;
    this.show('ended');
    this.reportCancelled();
  }

  private reportCancelled(): void {
    this.report({ type: 'cancelled' });
  }

  /** The checkout's one outcome; whichever comes first is the only one the host hears. */
  private report(outcome: Outcome): void {
    if (this.outcome) return;
    this.outcome = outcome.type;
    this.pendingError = undefined;
    this.post(outcome);
  }

  /**
   * ERROR: the payer reads `payer`, the developer gets `developer` through `onError`: at once when no account
   * was shown yet, else when the payer leaves the screen (the stream may still bring the payment first).
   */
  private fail(payer: string, developer: string): void {
    this.errorMessage = payer;
    this.show('error');
    if (this.screen !== 'error' || this.outcome) return;
    if (this.token) this.pendingError = developer;
    else this.report({ type: 'error', message: developer });
  }

  /** The payer leaves a final screen: an ERROR's pending outcome is reported, then the overlay closes. */
  private leave(): void {
    if (this.screen === 'error' && this.pendingError !== undefined) {
      this.report({ type: 'error', message: this.pendingError });
    }
    this.post({ type: 'close' });
  }

  /** "Keep paying" (or Escape, or the close control) on the cancel question: back to where the payer was. */
  private keepPaying(): void {
    if (this.screen !== 'confirm-cancel') return;
    this.show(this.remainingMs() > 0 ? this.beforeCancelQuestion : 'expired');
  }

  private async cancelSession(): Promise<void> {
    const session = this.session;
    const token = this.token;
    const api = this.api;
    if (!session || !token || !api) return;
    this.cancelling = true;
    this.busy = true;
    try {
      await api.cancel(session.id, token);
      this.showCancelled();
    } catch (error) {
      // 409: the session finished first (paid, or ended); the stream says which.
      if (!(error instanceof ApiError && error.code === 'session_not_active'))
        this.fail(texts.actionFailed, this.actionFailure('POST /api/widget/sessions/{id}/cancel', error));
    } finally {
      this.cancelling = false;
      this.busy = false;
    }
  }

  private async retry(): Promise<void> {
    const session = this.session;
    const token = this.token;
    const api = this.api;
    if (!session || !token || !api || this.busy) return;
    this.busy = true;
    try {
      const result = await api.newAccount(session.id, token);
      this.session = result.session;
      this.account = result.virtualAccount;
      this.mismatch = undefined;
      this.announcedMilestones.clear();
      this.now = Date.now();
      this.show('awaiting');
    } catch (error) {
      // 409: the session ended, or the old account turned out to be paid at its closing: the stream says
      // which (SUCCESS or ENDED), so nothing is reported here that the stream could contradict.
      if (!(error instanceof ApiError && error.code === 'session_not_active'))
        this.fail(texts.actionFailed, this.actionFailure('POST /api/widget/sessions/{id}/accounts', error));
    } finally {
      this.busy = false;
    }
  }

  /** The developer's words for a call the checkout made that failed. */
  private actionFailure(what: string, error: unknown): string {
    if (error instanceof ApiError && error.status >= 500)
      return developerTexts.serviceFault(what, error.status);
    if (error instanceof ApiError)
      return developerTexts.refused(what, error.status, error.code, error.message);
    return developerTexts.unreachable(what, this.config.apiUrl);
  }

  private reconnect(): void {
    this.stream?.reconnectNow();
  }

  private show(screen: Screen): void {
    if (this.screen === screen) return;
    if (this.screen === 'success' || (this.screen === 'cancelled' && screen !== 'success')) return;
    // Back from ERROR (the stream returned): the checkout goes on, so its error is no longer its outcome.
    if (this.screen === 'error') this.pendingError = undefined;
    this.screen = screen;
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
    this.announcement = announcements[screen] ?? '';
  }

  private startTicker(): void {
    clearInterval(this.ticker);
    this.now = Date.now();
    this.ticker = setInterval(() => this.tick(), 1_000);
  }

  /** Recomputed from `expiresAt` on every tick (and when the tab returns), so it never drifts. */
  private tick(): void {
    this.now = Date.now();
    const remaining = this.remainingMs();
    if (remaining <= 0 && [...PAYING, 'confirm-cancel'].includes(this.screen)) {
      this.show('expired');
      return;
    }
    if (this.screen === 'awaiting' || this.screen === 'mismatch') {
      const minutesLeft = Math.ceil(remaining / 60_000);
      for (const milestone of COUNTDOWN_MILESTONES) {
        if (
          minutesLeft === milestone &&
          !this.announcedMilestones.has(milestone) &&
          remaining < milestone * 60_000
        ) {
          this.announcedMilestones.add(milestone);
          this.announcement = texts.countdownMilestone(milestone);
        }
      }
    }
  }

  private remainingMs(): number {
    if (!this.account) return 0;
    return Date.parse(this.account.expiresAt) - (this.now + (this.api?.clockOffsetMs ?? 0));
  }

  private onVisibility = (): void => {
    if (document.visibilityState !== 'visible') return;
    this.tick();
    this.stream?.reconnectNow();
  };

  private onOnline = (): void => {
    this.stream?.reconnectNow();
  };

  private onKeydown = (event: KeyboardEvent): void => {
    if (event.key === 'Escape') {
      event.preventDefault();
      void this.requestClose();
    }
  };

  private async copy(): Promise<void> {
    const number = this.account?.accountNumber;
    if (!number) return;
    let copied = false;
    try {
      await navigator.clipboard.writeText(number);
      copied = true;
    } catch {
      copied = this.copyBySelection();
    }
    this.copyState = copied ? 'copied' : 'failed';
    this.announcement = copied ? texts.copiedAnnouncement : texts.copyFailed;
    clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => {
      this.copyState = 'idle';
    }, 2_000);
  }

  /** Without the Clipboard API (an embedder that did not delegate `clipboard-write`), select the digits. */
  private copyBySelection(): boolean {
    const digits = this.renderRoot.querySelector('.digits');
    const selection = window.getSelection();
    if (!digits || !selection) return false;
    const range = document.createRange();
    range.selectNodeContents(digits);
    selection.removeAllRanges();
    selection.addRange(range);
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
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
    const amount = session ? formatAmount(session.amount, session.currency) : '';
    return html`
      ${
        session
          ? html`<header>
              <p class="merchant">${texts.payWith(session.merchantName)}</p>
              <p class="amount">${amount}</p>
              ${session.environment === 'test' ? html`<span class="badge">${texts.testBadge}</span>` : nothing}
            </header>`
          : nothing
      }
      <main>${renderScreen(
        {
          screen: this.screen,
          session,
          account: this.account,
          mismatch: this.mismatch,
          remainingMs: this.remainingMs(),
          errorMessage: this.errorMessage,
          canReconnect: this.token !== undefined && this.streamState === 'lost',
          busy: this.busy,
          copyState: this.copyState,
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
    reconnect: () => this.reconnect(),
    leave: () => this.leave(),
    close: () => this.post({ type: 'close' }),
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'servicepay-frame-app': ServicePayFrameApp;
  }
}
