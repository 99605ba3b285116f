import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line of one request carries. */
export interface RequestScope {
  requestId: string;
}

/**
 * The request a piece of work belongs to, carried through its callbacks and promises by Node's
 * `AsyncLocalStorage`: `middleware/request-id.ts` opens a scope per request, and the logger adds its
 * `requestId` to every line written inside it, so a line says which request it came from without each caller
 * passing the id along.
 *
 * @example
 * requestScope.run({ requestId: 'req_…' }, next);
 * requestScope.getStore()?.requestId; // inside the request's work
 */
export const requestScope = new AsyncLocalStorage<RequestScope>();
