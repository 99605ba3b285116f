import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** Whether the last copy worked, shown on the copy button for two seconds. */
export type CopyState = 'idle' | 'copied' | 'failed';

/**
 * The account number's copy button as a Lit reactive controller: the Clipboard API, else (an embedder that did
 * not delegate `clipboard-write`) the digits selected and `execCommand('copy')`; the button says how it went for
 * two seconds.
 *
 * @example
 * private copier = new CopyController(this, () => this.renderRoot.querySelector('.digits'));
 * const copied = await this.copier.copy(account.accountNumber);
 */
export class CopyController implements ReactiveController {
  state: CopyState = 'idle';
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    /** The element holding the digits, for the selection fallback. */
    private readonly digits: () => Element | null,
  ) {
    host.addController(this);
  }

  hostDisconnected(): void {
    clearTimeout(this.timer);
  }

  /** Copies `text`; true if it reached the clipboard. */
  async copy(text: string): Promise<boolean> {
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch {
      copied = this.copyBySelection();
    }
    this.state = copied ? 'copied' : 'failed';
    this.host.requestUpdate();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.state = 'idle';
      this.host.requestUpdate();
    }, 2_000);
    return copied;
  }

  private copyBySelection(): boolean {
    const digits = this.digits();
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
}
