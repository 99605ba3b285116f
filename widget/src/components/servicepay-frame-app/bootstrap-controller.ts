import type { BootstrapResult } from '@servicepay/node/protocol';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { ApiError, CheckoutApi } from '../../frame/api-client.ts';
import type { FrameConfig } from '../../frame/frame-config.ts';
import { developerTexts, frameTexts as texts } from '../../texts.ts';

/** What the host hears from the bootstrap. */
export interface BootstrapHandlers {
  /** The secret was exchanged: the token, the session and its account. */
  onReady(result: BootstrapResult): void | Promise<void>;
  /** It could not be: what the payer reads, and what the developer reads. */
  onFailed(payer: string, developer: string): void;
}

/**
 * The checkout's start as a Lit reactive controller: checks the client secret against this host's environment
 * (before the secret is spent, so the right host can still use it), then exchanges it once for the widget token
 * (`POST /api/widget/bootstrap`). It keeps the API client and the token for the rest of the checkout.
 *
 * @example
 * private bootstrap = new BootstrapController(this, () => this.config, { onReady, onFailed });
 * this.bootstrap.start('cs_test_…');
 */
export class BootstrapController implements ReactiveController {
  /** The service's API, once started. */
  api: CheckoutApi | undefined;
  /** The widget token, once the secret was exchanged. */
  token: string | undefined;
  private running: Promise<void> | undefined;

  constructor(
    host: ReactiveControllerHost,
    private readonly config: () => FrameConfig,
    private readonly handlers: BootstrapHandlers,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    // Nothing to start on connect: the exchange waits for `start`, which the frame calls once the host says so.
  }

  /** Whether the exchange was started (it happens once). */
  get started(): boolean {
    return this.running !== undefined;
  }

  /** Checks the secret's environment, then exchanges it; a second call does nothing. */
  start(clientSecret: string): void {
    if (this.running) return;
    const config = this.config();
    const api = new CheckoutApi(config.apiUrl);
    this.api = api;
    const secretEnvironment = clientSecret.startsWith('cs_live_') ? 'live' : 'test';
    if (secretEnvironment !== config.environment) {
      const rightHost = secretEnvironment === 'live' ? config.liveHost : config.testHost;
      this.handlers.onFailed(
        texts.cannotOpen,
        developerTexts.wrongHost(
          secretEnvironment,
          config.environment === 'live' ? 'production' : 'test',
          rightHost,
        ),
      );
      return;
    }
    this.running = this.exchange(api, clientSecret);
  }

  private async exchange(api: CheckoutApi, clientSecret: string): Promise<void> {
    try {
      const result = await api.bootstrap(clientSecret);
      this.token = result.token;
      await this.handlers.onReady(result);
    } catch (error) {
      const [payer, developer] = this.failure(error);
      this.handlers.onFailed(payer, developer);
    }
  }

  /** The developer's words for a later call of the checkout (`what`) that failed. */
  callFailure(what: string, error: unknown): string {
    if (error instanceof ApiError && error.status >= 500)
      return developerTexts.serviceFault(what, error.status);
    if (error instanceof ApiError)
      return developerTexts.refused(what, error.status, error.code, error.message);
    return developerTexts.unreachable(what, this.config().apiUrl);
  }

  /** What the payer reads, and what the developer reads, when the client secret could not be exchanged. */
  private failure(error: unknown): [payer: string, developer: string] {
    if (!(error instanceof ApiError)) {
      return [texts.networkError, developerTexts.unreachable('the checkout', this.config().apiUrl)];
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
}
