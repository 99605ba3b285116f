import type { FrameMessage } from '../../protocol/messages.ts';

/** The one callback a checkout ends with (docs/decisions/widget.md, "How a checkout ends"). */
export type Outcome = Extract<FrameMessage, { type: 'success' | 'cancelled' | 'error' }>;

/** SUCCESS (spec §8) and CANCELLED go back to the merchant by themselves after this long. */
const AUTO_RETURN_MS = 3_000;

/**
 * What the host hears of how the checkout ended: exactly one outcome, whichever comes first, and when to close.
 * An ERROR reached after the account was shown is held (the payment may still land: the stream can come back
 * with it) and reported only when the payer leaves the ERROR screen.
 *
 * @example
 * const outcome = new CheckoutOutcome((message) => port.postMessage(message));
 * outcome.report({ type: 'cancelled' });
 * outcome.closeSoon();
 */
export class CheckoutOutcome {
  /** How the checkout ended, once reported: no second callback ever follows the first. */
  private reported: Outcome['type'] | undefined;
  /** The developer's message of an ERROR held until the payer leaves it. */
  private heldError: string | undefined;
  private returnTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly post: (message: FrameMessage) => void) {}

  /** Whether an outcome was reported already. */
  get settled(): boolean {
    return this.reported !== undefined;
  }

  /** The checkout's one outcome; whichever comes first is the only one the host hears. */
  report(outcome: Outcome): void {
    if (this.reported) return;
    this.reported = outcome.type;
    this.heldError = undefined;
    this.post(outcome);
  }

  /** An ERROR the payment may still overtake: reported when the payer leaves it (`leave`). */
  holdError(developerMessage: string): void {
    this.heldError = developerMessage;
  }

  /** The checkout went on after all (the stream came back): its error is no longer its outcome. */
  dropHeldError(): void {
    this.heldError = undefined;
  }

  /** The payer leaves a final screen: a held ERROR is reported, then the overlay closes. */
  leave(): void {
    if (this.heldError !== undefined) this.report({ type: 'error', message: this.heldError });
    this.close();
  }

  /** Closes the overlay now. */
  close(): void {
    this.post({ type: 'close' });
  }

  /** Closes the overlay after a moment (SUCCESS, CANCELLED). */
  closeSoon(): void {
    clearTimeout(this.returnTimer);
    this.returnTimer = setTimeout(() => this.close(), AUTO_RETURN_MS);
  }

  /** The element left the page: no close is sent later. */
  dispose(): void {
    clearTimeout(this.returnTimer);
  }
}
