import type { ErrorCode } from '@servicepay/node/protocol';
import { type DomainError, DomainError as DomainErrorClass, type DomainReason } from '../domain-errors.ts';
import { HttpError } from '../errors.ts';

/** The status a refusal answers, by its reason: the one place a reason of the services becomes HTTP. */
const STATUS_OF: Record<DomainReason, 400 | 403 | 404 | 409 | 410> = {
  not_found: 404,
  forbidden: 403,
  environment_mismatch: 403,
  kyc_required: 403,
  validation_failed: 400,
  unsupported_currency: 400,
  amount_out_of_range: 400,
  reference_already_used: 409,
  webhook_endpoint_limit_reached: 400,
  invalid_client_secret: 400,
  client_secret_already_used: 409,
  client_secret_expired: 410,
  session_not_active: 409,
  no_open_account: 409,
  session_not_refundable: 409,
  session_fully_refunded: 409,
  refund_exceeds_remaining: 400,
  payment_link_inactive: 410,
  payment_link_completed: 409,
};

/**
 * A service's refusal as the API answers it: the reason's status, the reason as the envelope's `code`, the
 * service's message and field errors unchanged.
 *
 * @example
 * httpErrorOf(new DomainError('session_not_active', 'The session is paid.')); // HttpError 409 session_not_active
 */
export function httpErrorOf(error: DomainError): HttpError {
  // Every reason is a code of the protocol: a reason added without one does not compile here.
  const code: ErrorCode = error.reason;
  return new HttpError(STATUS_OF[error.reason], code, error.message, error.fieldErrors);
}

/**
 * `raised` as the edge answers it: a service's `DomainError` becomes its `HttpError`; anything else is returned
 * as it is. For the edges that catch errors themselves (the error middleware, the portal's pages).
 *
 * @example
 * const error = asHttpError(raised);
 * if (error instanceof HttpError) res.status(error.status);
 */
export function asHttpError(raised: unknown): unknown {
  return raised instanceof DomainErrorClass ? httpErrorOf(raised) : raised;
}
