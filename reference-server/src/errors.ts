import type { ErrorCode, FieldError } from '@servicepay/node/protocol';

/**
 * What a route throws to answer with an error. The error middleware writes it in the envelope
 * `{ meta: { statusCode, message, code, requestId }, errors? }`; nothing else ever reaches the client.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const notFound = (noun: string) => new HttpError(404, 'not_found', `No such ${noun}.`);
