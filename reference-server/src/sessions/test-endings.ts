import type { Session, SessionStatus } from '@servicepay/node/protocol';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { Repositories } from '../db/repositories.ts';
import type { Store } from '../db/store.ts';
import { DomainError } from '../domain-errors.ts';
import type { Clock } from '../internal/clock.ts';
import { isTerminal } from '../views/session-status.ts';
import type { SessionExpiry } from './session-expiry.ts';
import type { SessionService } from './session-service.ts';

/** Which clock test mode runs out now: the session's own lifetime, or its current account's countdown. */
export type TestEnding = 'session' | 'account';

const notActive = (status: SessionStatus) =>
  new DomainError('session_not_active', `The session is ${status}; it can no longer expire.`);

/**
 * Test mode's "expire now" (`POST /api/test/sessions/{id}/expire` and `…/account/expire`, the SDK's
 * `testHelpers.expire` and `expireAccount`, the portal's session page): a developer or a suite reaches EXPIRED,
 * and a shop's failed-order path, in seconds instead of 30 minutes or 2 hours. Each brings the row's end
 * forward to now and then ends it with the sweeper's own code (`SessionExpiry`), so what follows is exactly
 * what a natural end does: the bank closes the account first (a credit that came first pays the session
 * instead), the transition, its event and webhook, the push to an open checkout. The caller checks the test
 * key (routes: 403 `test_mode_only` for a live one); here the session must be the caller's.
 *
 * @example
 * const expired = await endings.expire(caller, 'ses_…', 'session'); // status 'expired', session.expired sent
 */
export class TestEndings {
  constructor(
    private readonly store: Store,
    private readonly expiry: SessionExpiry,
    private readonly sessions: SessionService,
    private readonly clock: Clock,
  ) {}

  /**
   * Ends the session's lifetime (`session`: `expired`, terminal) or its current account's countdown
   * (`account`: back to `pending` with `account_expired`, a new account can be asked for) now. Answers the
   * session after. 409 `session_not_active` for a session that has ended (or that the bank's answer to closing
   * the account turned `successful`); 409 `no_open_account` for `account` when no account is open.
   */
  async expire(caller: ApiCaller, id: string, ending: TestEnding): Promise<Session> {
    const before = await this.sessions.ownedSession(caller, id);
    if (isTerminal(before.status)) throw notActive(before.status);
    const now = this.clock.now();
    if (ending === 'session') {
      await this.store.writes.run(async (tx) => {
        await tx.sessions.expireAt(id, now);
        await this.audit(tx, caller, before, ending, now);
      });
      await this.expiry.endSession(id, now);
    } else {
      const account =
        before.accountNumber === null
          ? undefined
          : await this.store.virtualAccounts.find(before.accountNumber);
      const offered = before.status === 'awaiting_payment' || before.status === 'mismatch';
      if (!account || account.closedAt !== null || !offered) {
        throw new DomainError(
          'no_open_account',
          `The session is ${before.status} with no open account; open one first (the checkout, or POST /api/test/sessions/{id}/account).`,
        );
      }
      await this.store.writes.run(async (tx) => {
        await tx.virtualAccounts.expireAt(account.accountNumber, now);
        await this.audit(tx, caller, before, ending, now);
      });
      await this.expiry.endAccount(account, now);
    }
    const after = await this.sessions.ownedSession(caller, id);
    const expected: SessionStatus = ending === 'session' ? 'expired' : 'pending';
    if (after.status !== expected) throw notActive(after.status);
    return this.sessions.view(after);
  }

  private audit(
    tx: Repositories,
    caller: ApiCaller,
    session: { id: string; businessId: string; environment: Session['environment']; status: SessionStatus },
    ending: TestEnding,
    now: number,
  ): Promise<unknown> {
    return tx.auditLog.record({
      at: now,
      actor: caller.actor ?? `secret_key:${caller.environment}`,
      action: ending === 'session' ? 'session.expired_by_test_helper' : 'account.expired_by_test_helper',
      businessId: session.businessId,
      environment: session.environment,
      target: session.id,
      details: { previousStatus: session.status },
    });
  }
}
