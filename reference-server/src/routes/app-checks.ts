import { errorHandler } from '../middleware/error-handler.ts';
import { jsonBody, refuseOversizedBody } from '../middleware/json-body.ts';
import { refuseOverBudget } from '../middleware/over-budget.ts';
import { refuseLoneSurrogates } from '../middleware/well-formed-text.ts';
import type { DocumentedOperation } from './operation.ts';

/**
 * The middleware `createApp` mounts in front of the operations, each declared once with the statuses it
 * answers and the operations it stands in front of: `createApp` mounts it from here (`mount`), and the OpenAPI
 * document adds its statuses to those operations (`openapi/path-items.ts`). The checks of each operation's own
 * auth are declared with its guards (`API_GUARD_STATUSES`, `portalGuardStatuses`).
 *
 * @example
 * app.use(APP_CHECKS.bodyLimit.mount(config.bodyLimitBytes));
 */
export const APP_CHECKS = {
  /** A body announced over the limit, refused before it is read: every route (the portal's too). */
  bodyLimit: { statuses: [413], before: () => true, mount: refuseOversizedBody },
  /**
   * A business over its budget, refused before routing and before its body is read (issue 12): the API's
   * routes (`refuseOverBudget` looks at `/api/` paths only).
   */
  budget: {
    statuses: [429],
    before: (operation: DocumentedOperation) => operation.path.startsWith('/api/'),
    mount: refuseOverBudget,
  },
  /**
   * A POST or PATCH body that is not JSON (415), malformed, or with a lone surrogate (400; refused, not stored
   * altered): mounted after the operations that read their own body.
   */
  jsonBody: {
    statuses: [400, 415],
    before: (operation: DocumentedOperation) =>
      !operation.readsOwnBody && (operation.method === 'post' || operation.method === 'patch'),
    mount: (limitBytes: number) => [...jsonBody(limitBytes), refuseLoneSurrogates],
  },
  /** The error handler: 503 with `Retry-After` while the database does not answer or its disk is full. */
  errorHandler: {
    statuses: [503],
    before: (operation: DocumentedOperation) => operation.readsDatabase !== false,
    mount: errorHandler,
  },
} as const;
