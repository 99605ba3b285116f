import type { StatusMessage } from '@servicepay/node/protocol';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { StatusStream, type StreamState } from '../../frame/status-stream.ts';

/** What the host hears from the stream. */
export interface StatusStreamHandlers {
  onMessage(message: StatusMessage): void;
  /** The stream gave up reconnecting (`lost`): the payer's **Try again** calls `reconnectNow`. */
  onLost(): void;
  /** The service refused the widget token (401/403): nothing a reconnect can fix. */
  onRefused(status: number): void;
}

/**
 * The session's push stream (`StatusStream`) as a Lit reactive controller: opened once the checkout has its
 * token, its state kept for the host's render (`state`), reconnected at once when the browser comes online or
 * the tab comes back, and stopped when the host leaves the page.
 *
 * @example
 * private stream = new StatusStreamController(this, { onMessage: (m) => this.onStatus(m), onLost, onRefused });
 * this.stream.open(`${apiUrl}/api/widget/sessions/${id}/events`, token);
 */
export class StatusStreamController implements ReactiveController {
  /** Where the stream is: `lost` offers the payer a reconnect. */
  state: StreamState = 'connecting';
  private stream: StatusStream | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly handlers: StatusStreamHandlers,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    document.addEventListener('visibilitychange', this.onVisibility);
    window.addEventListener('online', this.reconnectNow);
  }

  hostDisconnected(): void {
    document.removeEventListener('visibilitychange', this.onVisibility);
    window.removeEventListener('online', this.reconnectNow);
    this.stream?.stop();
  }

  /** Opens the stream at `url` with the widget `token`. */
  open(url: string, token: string): void {
    this.stream = new StatusStream({
      url,
      token,
      onMessage: (message) => this.handlers.onMessage(message),
      onState: (state) => {
        this.state = state;
        this.host.requestUpdate();
        if (state === 'lost') this.handlers.onLost();
      },
      onRefused: (status) => this.handlers.onRefused(status),
    });
    this.stream.start();
  }

  /** Reconnects now, skipping the wait (the payer's button, the browser online, the tab back). */
  readonly reconnectNow = (): void => {
    this.stream?.reconnectNow();
  };

  private readonly onVisibility = (): void => {
    if (document.visibilityState === 'visible') this.reconnectNow();
  };
}
