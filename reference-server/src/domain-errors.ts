import type { FieldError } from '@servicepay/node/protocol';

/**
 * Why a service refused what it was asked, in the domain's words. Each reason is also the error `code` the
 * client reads (docs/protocol.md, "Services speak the domain"); which HTTP status it answers is decided at the
 * edge only (`middleware/domain-error-status.ts`), where the record of statuses must name every reason here.
 */
export type DomainReason =
  // Who may touch what
  | 'not_found'
  | 'forbidden'
  | 'environment_mismatch'
  | 'kyc_required'
  // What was asked
  | 'validation_failed'
  | 'unsupported_currency'
  | 'amount_out_of_range'
  | 'reference_already_used'
  | 'webhook_endpoint_limit_reached'
  // The checkout's client secret
  | 'invalid_client_secret'
  | 'client_secret_already_used'
  | 'client_secret_expired'
  // The session's state
  | 'session_not_active'
  | 'no_open_account'
  // Refunds
  | 'session_not_refundable'
  | 'session_fully_refunded'
  | 'refund_exceeds_remaining'
  // Payment links
  | 'payment_link_inactive'
  | 'payment_link_completed';

/**
 * What a service throws when it refuses: a reason from `DomainReason`, a message a merchant or payer can act
 * on, and the fields at fault when there are some. It carries no HTTP status: the services are called by the
 * API, the portal and the command line alike, and only the API's edge turns a reason into a status.
 *
 * @example
 * if (session.status !== 'successful') throw new DomainError('session_not_refundable', 'Only a successful session can be refunded.');
 */
export class DomainError extends Error {
  override readonly name: string = 'DomainError';
  constructor(
    readonly reason: DomainReason,
    message: string,
    readonly fieldErrors?: FieldError[],
  ) {
    super(message);
  }
}

/**
 * The refusal for a resource that does not exist (or is not the caller's to know about).
 *
 * @example
 * if (!session) throw notFound('session'); // "No such session."
 */
export const notFound = (noun: string): DomainError => new DomainError('not_found', `No such ${noun}.`);

/**
 * A write job's conditional write found its row changed by a concurrent job: another request, or on
 * PostgreSQL another transaction, possibly on another instance, that committed between the job's read and its
 * write. The PostgreSQL write queue runs the job again, which then reads the row as committed and decides
 * anew (a duplicate notification finds the transfer settled; a cancel finds the session paid). On SQLite jobs
 * never overlap, so it does not happen there. Should it reach the client, it is the refusal of its reason.
 *
 * @example
 * if (!(await tx.sessions.change(id, session, change))) throw new WriteConflict('session_not_active', 'The session changed meanwhile; try again.');
 */
export class WriteConflict extends DomainError {
  override readonly name = 'WriteConflict';
  /** What the write queue looks for (it knows nothing of the services' errors): run the job again. */
  readonly retryWrite = true;
}
