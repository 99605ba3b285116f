import type { UnappliedCredits } from '../bank/unapplied-credits.ts';
import { REQUEST_LOG_KEEP } from '../db/request-log.ts';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { RefundPayouts } from '../refunds/refund-payouts.ts';
import type { SessionExpiry } from './session-expiry.ts';

const BATCH = 200;
/** How often a pass also prunes the request log (a scan of the table: not every second). */
const REQUEST_LOG_PRUNE_EVERY_MS = 60_000;

/**
 * Ends what ran out of time: sessions past their lifetime become `expired`; an account whose countdown ended
 * with no transfer sends its session back to `pending` (`account_expired`) so the payer can ask for a new one.
 * Runs at start, so sessions that fell due while the service was down are settled first, then on an interval.
 * It also keeps the stores bounded: expired idempotency keys go, and (at most once a minute) the request log is
 * cut to the newest `REQUEST_LOG_KEEP` per business and environment.
 * Each ending settles with the bank first (see `SessionLifecycle`): a session whose account the bank already
 * credited (say, while the service was down and before the bank's retry arrives) ends `successful`.
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private requestLogPrunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Store,
    private readonly expiry: SessionExpiry,
    private readonly credits: UnappliedCredits,
    private readonly refundPayouts: RefundPayouts,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly idempotencyKeyTtlMs: number,
    /**
     * Runs a timed pass unless another instance is running one (PostgreSQL: `runAlone` under an advisory
     * lock), so N instances do not read, and ask the bank about, the same due rows N times. Every pass is
     * correct on its own (each ending is one conditional transition); this only saves the duplicates.
     */
    private readonly runAlone: <T>(work: () => Promise<T>) => Promise<T | undefined> = (work) => work(),
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sweepSafely(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * One pass; returns how many sessions it moved. Each ending closes the account at the bank before its write
   * job (`SessionExpiry`); then refunds an earlier pass or instance left pending (of unapplied credits and
   * merchants' refunds) are asked again.
   */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    let moved = 0;
    for (const due of await this.store.sessions.overdue(now, BATCH)) {
      moved += await this.expiry.endSession(due.id, now);
    }
    for (const account of await this.store.virtualAccounts.overdue(now, BATCH)) {
      moved += await this.expiry.endAccount(account, now);
    }
    await this.credits.refundPending();
    await this.refundPayouts.payPending();
    await this.store.writes.run((tx) => tx.idempotencyKeys.purge(now - this.idempotencyKeyTtlMs));
    if (now - this.requestLogPrunedAt >= REQUEST_LOG_PRUNE_EVERY_MS) {
      this.requestLogPrunedAt = now;
      await this.store.writes.run((tx) => tx.requestLog.prune(REQUEST_LOG_KEEP));
    }
    return moved;
  }

  private async sweepSafely(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.runAlone(() => this.sweep());
    } catch (error) {
      this.logger.error('expiry sweep failed', {
        error: error instanceof Error ? error.message : String(error),
      });
    } finally {
      this.running = false;
    }
  }
}
