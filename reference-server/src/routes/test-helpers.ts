import { SessionSchema, SimulatedTransferSchema, TestAccountSchema } from '@servicepay/node/protocol';
import type { ApiCaller } from '../businesses/ownership.ts';
import { HttpError } from '../errors.ts';
import { TestTransfers } from '../sessions/test-transfers.ts';
import { transferBody } from './bank.ts';
import { defineOperation, emptyBody, json } from './operation.ts';

/** Simulated money moves only with a test key: a live key answers 403 `test_mode_only`. */
function refuseLive(caller: ApiCaller): void {
  if (caller.environment !== 'test') {
    throw new HttpError(
      403,
      'test_mode_only',
      'Test helpers need a test key (sk_test_...). Live money moves at a real bank.',
    );
  }
}

/**
 * A merchant's automated tests pay their own test sessions with the secret test key, without the widget:
 * `POST /api/test/sessions/{id}/account` opens the session's checkout (its virtual account) as the widget's
 * bootstrap would, and `POST /api/test/transfers` has the simulated bank pay an account. They reach the other
 * endings at once too: `POST /api/test/sessions/{id}/expire` ends the session's lifetime now (`expired`), and
 * `POST /api/test/sessions/{id}/account/expire` its account's countdown (back to `pending`, `account_expired`).
 *
 * @example
 * mountOperations(app, TEST_HELPER_OPERATIONS, deps); // as createApp mounts every table
 */
export const TEST_HELPER_OPERATIONS = [
  defineOperation({
    method: 'post',
    path: '/api/test/sessions/{id}/account',
    operationId: 'openTestAccount',
    tag: 'Testing',
    summary: "Open a test session's checkout without the widget (its virtual account)",
    description:
      'What the widget bootstrap does for a session whose client secret was never used (marks it used, provisions the first account); for an open session, its current account, or a fresh one if the last ran out.',
    auth: 'secretKey',
    admit: refuseLive,
    body: emptyBody,
    idempotency: 'replay',
    success: {
      200: json('The session, awaiting payment, and its account.', TestAccountSchema, 'TestAccount'),
    },
    errors: [404, 409],
    handler: async ({ caller, params }, { sessions }) => ({
      data: await sessions.openForTest(caller, params.id),
    }),
  }),
  defineOperation({
    method: 'post',
    path: '/api/test/sessions/{id}/expire',
    operationId: 'expireTestSession',
    tag: 'Testing',
    summary: "End a test session's lifetime now: `expired`, as at its natural end",
    description:
      'Brings the session\'s end forward to now and ends it with the sweeper\'s own code: the account is closed at the bank first, then `expired` (terminal), `session.expired` to your endpoints, and an open checkout shows "This payment has ended". If the bank answers that the account was already credited, the session is `successful` instead and this answers 409 `session_not_active`, as does an ended session.',
    auth: 'secretKey',
    admit: refuseLive,
    body: emptyBody,
    idempotency: 'replay',
    success: { 200: json('The expired session.', SessionSchema, 'Session') },
    errors: [404, 409],
    handler: async ({ caller, params }, { testEndings }) => ({
      data: await testEndings.expire(caller, params.id, 'session'),
    }),
  }),
  defineOperation({
    method: 'post',
    path: '/api/test/sessions/{id}/account/expire',
    operationId: 'expireTestAccount',
    tag: 'Testing',
    summary: "End a test session's account countdown now: back to `pending`, `account_expired`",
    description:
      "Brings the current account's end forward to now and ends it with the sweeper's own code: the account is closed at the bank first, then the session goes back to `pending` (reason `account_expired`, no webhook: the session is still open), and an open checkout shows EXPIRED with \"Get a new account number\". 409 `no_open_account` when no account is open; 409 `session_not_active` for an ended session, or when the bank's answer made it `successful`.",
    auth: 'secretKey',
    admit: refuseLive,
    body: emptyBody,
    idempotency: 'replay',
    success: { 200: json('The session, pending again.', SessionSchema, 'Session') },
    errors: [404, 409],
    handler: async ({ caller, params }, { testEndings }) => ({
      data: await testEndings.expire(caller, params.id, 'account'),
    }),
  }),
  defineOperation({
    method: 'post',
    path: '/api/test/transfers',
    operationId: 'testTransfer',
    tag: 'Testing',
    summary: "A simulated payer's transfer to a test session's account",
    auth: 'secretKey',
    admit: refuseLive,
    body: transferBody,
    idempotency: 'replay',
    success: {
      200: json(
        'What the bank did, and whether its notification was delivered.',
        SimulatedTransferSchema,
        'SimulatedTransfer',
      ),
    },
    errors: [404, 409],
    // The caller's own test session's account only: the service the portal's Test bank pays through too.
    handler: async ({ caller, body }, { store, bank }) => ({
      data: await new TestTransfers(store, bank).pay(
        caller,
        body.accountNumber,
        body.amount,
        body.payerAccount,
      ),
    }),
  }),
];
