import type { Session } from '@servicepay/node/protocol';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { Repositories } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import { notFound } from '../domain-errors.ts';
import { toSessionView } from '../views/session-views.ts';

// The two reads every session service starts from, shared by `SessionService` and `AccountOpening`.

/**
 * The session if it belongs to the caller's business and environment; 404 if none, 403 if another's.
 * `repositories`: the store, or a write job's own (to read its uncommitted writes on PostgreSQL).
 *
 * @example
 * const session = await ownedSession(caller, 'ses_...', store);
 */
export async function ownedSession(
  caller: ApiCaller,
  id: string,
  repositories: Repositories,
): Promise<SessionRecord> {
  const session = await repositories.sessions.find(id);
  if (!session) throw notFound('session');
  assertOwnedBy(caller, session, 'session');
  return session;
}

/**
 * The session as the API shows it, with the account it offers now. `repositories`: the write job's inside one,
 * so that it reads its own uncommitted writes on PostgreSQL.
 *
 * @example
 * const view = await sessionView(session, tx);
 */
export async function sessionView(session: SessionRecord, repositories: Repositories): Promise<Session> {
  const account =
    session.accountNumber === null
      ? undefined
      : await repositories.virtualAccounts.find(session.accountNumber);
  return toSessionView(session, account);
}
