import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { COUNTDOWN_MILESTONES } from '../../frame/format.ts';

/** What the countdown reads from its host: when the account expires, and the service's clock. */
export interface CountdownSource {
  /** The account's `expiresAt` (ISO), or undefined before there is one. */
  expiresAt(): string | undefined;
  /** Service clock minus local clock, from the API's answers. */
  clockOffsetMs(): number;
}

/**
 * The account's countdown as a Lit reactive controller: one tick a second once `start`ed, and one when the tab
 * comes back (timers sleep in a hidden tab). Each tick updates the host and hands it the time left, recomputed
 * from `expiresAt` on the service's clock, so it never drifts. It also says which countdown milestone (15, 5, 1
 * minutes left) was just reached, once each, for the screen reader's announcement.
 *
 * @example
 * private countdown = new CountdownController(this, { expiresAt: () => this.account?.expiresAt, clockOffsetMs: () => 0 }, (left) => this.onTick(left));
 * this.countdown.start();
 */
export class CountdownController implements ReactiveController {
  /** The local time of the last tick. */
  now = Date.now();
  private ticker: ReturnType<typeof setInterval> | undefined;
  private readonly announced = new Set<number>();

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly source: CountdownSource,
    private readonly onTick: (remainingMs: number) => void,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  hostDisconnected(): void {
    document.removeEventListener('visibilitychange', this.onVisibility);
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  /** Ticks every second from now on. */
  start(): void {
    clearInterval(this.ticker);
    this.now = Date.now();
    this.ticker = setInterval(() => this.tick(), 1_000);
  }

  /** A new account: its milestones may be announced again, and the time left is read afresh. */
  restart(): void {
    this.announced.clear();
    this.now = Date.now();
    this.host.requestUpdate();
  }

  /** Until the account expires, on the service's clock (0 without an account). */
  remainingMs(): number {
    const expiresAt = this.source.expiresAt();
    if (expiresAt === undefined) return 0;
    return Date.parse(expiresAt) - (this.now + this.source.clockOffsetMs());
  }

  /** The milestone `remainingMs` has just reached, if it is one not announced yet. */
  milestoneReached(remainingMs: number): number | undefined {
    const minutesLeft = Math.ceil(remainingMs / 60_000);
    const milestone = COUNTDOWN_MILESTONES.find(
      (minutes) => minutesLeft === minutes && !this.announced.has(minutes) && remainingMs < minutes * 60_000,
    );
    if (milestone !== undefined) this.announced.add(milestone);
    return milestone;
  }

  /** Reads the clock, redraws the host and tells it the time left. */
  tick(): void {
    this.now = Date.now();
    this.host.requestUpdate();
    this.onTick(this.remainingMs());
  }

  private readonly onVisibility = (): void => {
    if (document.visibilityState === 'visible') this.tick();
  };
}
