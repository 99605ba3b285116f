import { portalGuardStatuses } from '../portal/portal-edge.ts';
import { API_GUARD_STATUSES } from '../routes/api-edge.ts';
import { APP_CHECKS } from '../routes/app-checks.ts';
import { validationStatuses } from '../routes/mount-operations.ts';
import { type DocumentedOperation, isPortalAuth } from '../routes/operation.ts';
import {
  corsHeaders,
  header,
  type Json,
  rateLimitHeaders,
  ref,
  requestIdHeader,
  type SchemaComponents,
  STATUS_TEXT,
} from './components.ts';
import { answersCorsAt } from './preflights.ts';

/**
 * The error statuses an operation answers, each from where it is declared: the handler's own (`errors`), its
 * auth's guards (`API_GUARD_STATUSES`, `portalGuardStatuses`), the validation of its query, body or form
 * (`validationStatuses`), and the middleware the app mounts in front of it (`APP_CHECKS`).
 *
 * @example
 * statusesOf(describeOperation(retrieveRefund)); // [400, 401, 403, 404, 413, 429, 503]
 */
export function statusesOf(operation: DocumentedOperation): number[] {
  const { auth } = operation;
  const statuses = new Set([
    ...operation.errors,
    ...(isPortalAuth(auth)
      ? portalGuardStatuses({ auth, method: operation.method })
      : API_GUARD_STATUSES[auth]),
    ...validationStatuses(operation),
    ...Object.values(APP_CHECKS).flatMap((check) => (check.before(operation) ? check.statuses : [])),
  ]);
  return [...statuses].sort((a, b) => a - b);
}

const html = { 'text/html': { schema: { type: 'string' } } };

/**
 * An operation's `responses`: each success (in the envelope, a page, a redirect, a stream, an asset) and each
 * error status (`statusesOf`: the error envelope, or a page for the portal), with the headers each sends.
 *
 * @example
 * responsesOf(describeOperation(retrieveRefund), schemas)['200']; // the Refund envelope, Request-Id, RateLimit-*
 */
export function responsesOf(operation: DocumentedOperation, schemas: SchemaComponents): Record<string, Json> {
  const portal = isPortalAuth(operation.auth);
  const statuses = statusesOf(operation);
  // The portal spends no API budget; its sign-in's 429 says when to try again all the same.
  const budgeted = !portal && statuses.includes(429);
  const cors = answersCorsAt(operation.path);
  const replays = operation.idempotency !== undefined;
  /** The headers of an answer with `status`: the request id, then the budget's, CORS, and the replay mark. */
  const headersFor = (status: number): Json => ({
    ...requestIdHeader,
    ...(budgeted && status < 500 ? rateLimitHeaders : {}),
    ...(status === 429 || status === 503 ? { 'Retry-After': header('RetryAfter') } : {}),
    ...(cors ? corsHeaders : {}),
    ...(replays && status < 300 ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {}),
  });
  const responses: Record<string, Json> = {};
  for (const [status, success] of Object.entries(operation.success)) {
    switch (success.kind) {
      case 'json':
        responses[status] = {
          description: success.description,
          headers: headersFor(Number(status)),
          content: {
            'application/json': {
              schema: ref(schemas.envelope(success.data, success.name, success.list ?? false)),
            },
          },
        };
        break;
      case 'html':
        responses[status] = {
          description: success.description,
          content: html,
        };
        break;
      case 'redirect':
        responses[status] = {
          description: success.description,
          headers: { Location: { schema: { type: 'string' }, description: 'Where to go next.' } },
        };
        break;
      case 'event-stream':
        // OpenAPI 3.1 has no field for the messages of a stream (3.2's `itemSchema`): the stream is a string,
        // and its messages are the `StatusEvent` component, pointed at from the media type.
        responses[status] = {
          description: success.description,
          headers: headersFor(Number(status)),
          content: {
            'text/event-stream': {
              schema: {
                type: 'string',
                description:
                  'Server-sent events: `retry: 1000`, then `StatusEvent` messages and `: heartbeat` comments.',
              },
              'x-item-schema': ref('StatusEvent'),
            },
          },
        };
        break;
      case 'stream-head':
        responses[status] = { description: success.description, headers: headersFor(Number(status)) };
        break;
      case 'asset':
        responses[status] = {
          description: success.description,
          content: portal
            ? {
                'text/css': { schema: { type: 'string' } },
                'text/javascript': { schema: { type: 'string' } },
              }
            : { 'application/json': { schema: { type: 'object' } } },
        };
        break;
      case 'svg':
        responses[status] = {
          description: success.description,
          headers: headersFor(Number(status)),
          content: { 'image/svg+xml': { schema: { type: 'string' } } },
        };
        break;
    }
  }
  // A HEAD answer has no body, whatever its status.
  const errorContent =
    operation.method === 'head' ? {} : { content: { 'application/json': { schema: ref('Error') } } };
  for (const status of statuses) {
    const text = STATUS_TEXT[status] ?? 'Error.';
    responses[String(status)] = portal
      ? {
          description: text,
          // A 429 (sign-in) or a 503 says when to try again, like the API's.
          ...(status === 429 || status === 503 ? { headers: { 'Retry-After': header('RetryAfter') } } : {}),
          content: html,
        }
      : { description: text, headers: headersFor(status), ...errorContent };
  }
  responses.default = portal
    ? { description: 'A fault of the service, as a page.', content: html }
    : {
        description: 'A fault of the service (500 internal_error), never a stack trace.',
        headers: requestIdHeader,
        ...errorContent,
      };
  return responses;
}
