import { ErrorCodeSchema } from '@servicepay/node/protocol';
import { describe, expect, it } from 'vitest';
import { DomainError, notFound, WriteConflict } from '../domain-errors.ts';
import { HttpError } from '../errors.ts';
import { asHttpError, httpErrorOf } from './domain-error-status.ts';

// Issue 27: the services refuse in the domain's words (a reason, a message, the fields at fault) and the edge
// alone turns a reason into a status. These pin the statuses the API answered before the services stopped
// naming them.

describe('a DomainError at the edge', () => {
  it('carries no HTTP status, and answers its reason as the code with the status the API always gave it', () => {
    const refused = new DomainError('refund_exceeds_remaining', 'At most 500 is left.', [
      { path: 'amount', message: 'must be at most 500' },
    ]);
    expect(refused).not.toHaveProperty('status');
    const answer = httpErrorOf(refused);
    expect(answer).toBeInstanceOf(HttpError);
    expect([answer.status, answer.code, answer.message]).toEqual([
      400,
      'refund_exceeds_remaining',
      'At most 500 is left.',
    ]);
    expect(answer.fieldErrors).toEqual([{ path: 'amount', message: 'must be at most 500' }]);
    const statuses = (
      [
        ['not_found', 404],
        ['forbidden', 403],
        ['environment_mismatch', 403],
        ['kyc_required', 403],
        ['validation_failed', 400],
        ['reference_already_used', 409],
        ['invalid_client_secret', 400],
        ['client_secret_already_used', 409],
        ['client_secret_expired', 410],
        ['session_not_active', 409],
        ['no_open_account', 409],
        ['session_not_refundable', 409],
        ['session_fully_refunded', 409],
        ['webhook_endpoint_limit_reached', 400],
        ['unsupported_currency', 400],
        ['amount_out_of_range', 400],
      ] as const
    ).map(([reason, status]) => [reason, httpErrorOf(new DomainError(reason, 'x')).status, status]);
    for (const [reason, got, want] of statuses) expect([reason, got]).toEqual([reason, want]);
  });

  it('notFound and WriteConflict are refusals too: 404 not_found, and 409 that the write queue retries', () => {
    expect(httpErrorOf(notFound('session'))).toMatchObject({
      status: 404,
      code: 'not_found',
      message: 'No such session.',
    });
    const conflict = new WriteConflict('session_not_active', 'The session changed meanwhile; try again.');
    expect(conflict.retryWrite).toBe(true);
    expect(httpErrorOf(conflict)).toMatchObject({ status: 409, code: 'session_not_active' });
    expect(ErrorCodeSchema.safeParse(conflict.reason).success).toBe(true);
  });

  it('asHttpError maps only DomainErrors and leaves anything else as it is', () => {
    const edge = new HttpError(415, 'unsupported_media_type', 'JSON only.');
    expect(asHttpError(edge)).toBe(edge);
    const fault = new Error('boom');
    expect(asHttpError(fault)).toBe(fault);
    expect(asHttpError(new DomainError('forbidden', 'Not yours.'))).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
  });
});
