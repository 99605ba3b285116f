import type { NewAccountResult } from '@servicepay/node/protocol';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { ApiError } from '../../frame/api-client.ts';
import { frameTexts as texts } from '../../texts.ts';
import type { BootstrapController } from './bootstrap-controller.ts';

/**
 * The checkout's calls after its start, as a Lit reactive controller: the payer's cancel and a new account
 * after the old one expired, each with the widget token the bootstrap got, one at a time (`busy` disables the
 * buttons that would start another). A 409 `session_not_active` (the session finished first: paid, or ended)
 * is not an error here: the stream says which. Any other failure goes to `onFailed` with the payer's and the
 * developer's words.
 *
 * @example
 * private calls = new SessionCallsController(this, this.bootstrap, (payer, developer) => this.fail(payer, developer));
 * if (await this.calls.cancel(session.id)) this.showCancelled();
 */
export class SessionCallsController implements ReactiveController {
  /** A call is on its way. */
  busy = false;
  /** The call on its way is the cancel (a second close request waits for it). */
  cancelling = false;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly bootstrap: BootstrapController,
    private readonly onFailed: (payer: string, developer: string) => void,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    // Nothing to start on connect: the calls wait for the payer.
  }

  /** Cancels the session on the service; true once it is cancelled. */
  async cancel(sessionId: string): Promise<boolean> {
    const { api, token } = this.bootstrap;
    if (!api || !token) return false;
    this.cancelling = true;
    this.setBusy(true);
    try {
      await api.cancel(sessionId, token);
      return true;
    } catch (error) {
      this.refused(error, 'POST /api/widget/sessions/{id}/cancel');
      return false;
    } finally {
      this.cancelling = false;
      this.setBusy(false);
    }
  }

  /** Asks for a new account (the old one expired); undefined if none was opened. Ignored while busy. */
  async newAccount(sessionId: string): Promise<NewAccountResult | undefined> {
    const { api, token } = this.bootstrap;
    if (!api || !token || this.busy) return undefined;
    this.setBusy(true);
    try {
      return await api.newAccount(sessionId, token);
    } catch (error) {
      this.refused(error, 'POST /api/widget/sessions/{id}/accounts');
      return undefined;
    } finally {
      this.setBusy(false);
    }
  }

  private refused(error: unknown, what: string): void {
    if (error instanceof ApiError && error.code === 'session_not_active') return;
    this.onFailed(texts.actionFailed, this.bootstrap.callFailure(what, error));
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    this.host.requestUpdate();
  }
}
