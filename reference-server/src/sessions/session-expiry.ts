import type { Store } from '../db/store.ts';
import { isTerminal } from '../views/session-status.ts';
import type { SessionLifecycle } from './session-lifecycle.ts';

/**
 * The two clocks of a session running out (docs/protocol.md, Sessions, "Two clocks"), one session or one account at a
 * time: what the sweeper does to every row that fell due, and what test mode's "expire now" does to one row
 * after bringing its end forward. Each ending closes the account at the bank before its write job
 * (`SessionLifecycle.closingFirst`): an account the bank already credited makes the session `successful`.
 *
 * @example
 * const expiry = new SessionExpiry(store, lifecycle);
 * await expiry.endSession('ses_…', clock.now()); // 1 if it moved to `expired`
 */
export class SessionExpiry {
  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionLifecycle,
  ) {}

  /** Ends a session whose lifetime ran out by `now`: `expired` (terminal). Answers how many sessions moved (0 or 1). */
  async endSession(sessionId: string, now: number): Promise<number> {
    const due = async () => {
      const session = await this.store.sessions.find(sessionId);
      return session && !isTerminal(session.status) && session.expiresAt <= now ? session : undefined;
    };
    return this.lifecycle.closingFirst(
      async () => (await due())?.accountNumber,
      (closed) =>
        this.store.writes.run(async (tx, context) => {
          const session = await tx.sessions.find(sessionId);
          if (!session || isTerminal(session.status) || session.expiresAt > now) return 0;
          await this.lifecycle.transition(tx, context, session, 'expired', { now, closed });
          return 1;
        }),
    );
  }

  /**
   * Ends an account whose countdown ran out with no transfer: its session goes back to `pending`
   * (`account_expired`), so the payer can ask for a new account. An account its session no longer offers is
   * only closed (and a credit on it refunded). Answers how many sessions moved (0 or 1).
   */
  async endAccount(account: { accountNumber: string; sessionId: string }, now: number): Promise<number> {
    return this.lifecycle.closingFirst(
      async () => account.accountNumber,
      (closed) =>
        this.store.writes.run(async (tx, context) => {
          if (!closed) return 0;
          const session = await tx.sessions.find(account.sessionId);
          const stillOffered =
            session?.accountNumber === account.accountNumber &&
            (session.status === 'awaiting_payment' || session.status === 'mismatch');
          if (!session || !stillOffered) {
            await this.lifecycle.closeStrayAccount(tx, context, closed, session, now);
            return 0;
          }
          await this.lifecycle.transition(tx, context, session, 'pending', {
            now,
            reason: 'account_expired',
            closeAccount: true,
            closed,
          });
          return 1;
        }),
    );
  }
}
