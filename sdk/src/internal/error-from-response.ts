import {
  APIError,
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  type ServicePayError,
  type ServicePayErrorInit,
} from '../errors.ts';
import type { FieldError } from '../protocol/index.ts';

// An error answer as the SDK's error class for its status: the one place statuses map to classes.

/** The request id of an answer: `Request-Id`, or the `X-Request-Id` a proxy may set instead. */
export const requestIdOf = (headers: Record<string, string>): string | null =>
  headers['request-id'] ?? headers['x-request-id'] ?? null;

interface ErrorEnvelope {
  message?: string;
  code?: string;
  requestId?: string;
  errors?: FieldError[];
}

/** Reads an error body leniently: a code added to the service later still reaches the caller as it is. */
const readErrorEnvelope = (text: string): ErrorEnvelope => {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof json !== 'object' || json === null) return {};
  const { meta, errors } = json as { meta?: Record<string, unknown>; errors?: unknown };
  const out: ErrorEnvelope = {};
  if (typeof meta?.message === 'string') out.message = meta.message;
  if (typeof meta?.code === 'string') out.code = meta.code;
  if (typeof meta?.requestId === 'string') out.requestId = meta.requestId;
  if (Array.isArray(errors)) {
    out.errors = errors
      .filter(
        (item): item is FieldError =>
          typeof item === 'object' &&
          item !== null &&
          typeof (item as FieldError).path === 'string' &&
          typeof (item as FieldError).message === 'string',
      )
      .map(({ path, message }) => ({ path, message }));
  }
  return out;
};

/** The error class and fields for an error status. */
export const errorFromResponse = (
  statusCode: number,
  headers: Record<string, string>,
  text: string,
  retryAfterMs: number | undefined,
): ServicePayError => {
  const envelope = readErrorEnvelope(text);
  const init: ServicePayErrorInit = {
    statusCode,
    headers,
    code: envelope.code ?? 'unknown_error',
    message: envelope.message ?? `The service answered ${statusCode}.`,
    requestId: envelope.requestId ?? requestIdOf(headers),
  };
  if (envelope.errors !== undefined) init.errors = envelope.errors;
  switch (statusCode) {
    case 401:
      return new AuthenticationError(init);
    case 403:
      return new PermissionError(init);
    case 404:
      return new NotFoundError(init);
    case 409:
      return new ConflictError(init);
    case 429:
      return new RateLimitError({
        ...init,
        retryAfter: retryAfterMs === undefined ? null : Math.ceil(retryAfterMs / 1000),
      });
    default:
      if (statusCode >= 400 && statusCode < 500 && statusCode !== 408) return new InvalidRequestError(init);
      return new APIError(init);
  }
};
