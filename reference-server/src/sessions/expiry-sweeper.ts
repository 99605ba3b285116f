import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { SessionLifecycle } from './session-lifecycle.ts';
import { isTerminal } from './session-lifecycle.ts';

const BATCH = 200;

/**
 * Ends what ran out of time: sessions past their lifetime become `expired`; an account whose countdown ended
 * with no transfer sends its session back to `pending` (`account_expired`) so the payer can ask for a new one.
 * Runs at start, so sessions that fell due while the service was down are settled first, then on an interval.
 * Each ending settles with the bank first (see `SessionLifecycle`): a session whose account the bank already
 * credited (say, while the service was down and before the bank's retry arrives) ends `successful`.
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionLifecycle,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly idempotencyKeyTtlMs: number,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sweepSafely(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One pass; returns how many sessions it moved. */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    let moved = 0;
    for (const due of await this.store.sessions.overdue(now, BATCH)) {
      moved += await this.store.writes.run(async (tx, context) => {
        const session = await tx.sessions.find(due.id);
        if (!session || isTerminal(session.status) || session.expiresAt > now) return 0;
        await this.lifecycle.transition(tx, context, session, 'expired', { now });
        return 1;
      });
    }
    for (const account of await this.store.virtualAccounts.overdue(now, BATCH)) {
      moved += await this.store.writes.run(async (tx, context) => {
        const session = await tx.sessions.find(account.sessionId);
        const stillOffered =
          session?.accountNumber === account.accountNumber &&
          (session.status === 'awaiting_payment' || session.status === 'mismatch');
        if (!session || !stillOffered) {
          await this.lifecycle.closeStrayAccount(tx, context, account.accountNumber, session, now);
          return 0;
        }
        await this.lifecycle.transition(tx, context, session, 'pending', {
          now,
          reason: 'account_expired',
          closeAccount: true,
        });
        return 1;
      });
    }
    await this.store.writes.run((tx) => tx.idempotencyKeys.purge(now - this.idempotencyKeyTtlMs));
    return moved;
  }

  private async sweepSafely(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.sweep();
    } catch (error) {
      this.logger.error('expiry sweep failed', {
        error: error instanceof Error ? error.message : String(error),
      });
    } finally {
      this.running = false;
    }
  }
}
