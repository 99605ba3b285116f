/**
 * How the service tells a database outage from its own fault, whichever database it runs on: the error
 * handler answers these 503 `service_unavailable` (retry later, with the same `Idempotency-Key`), not 500.
 */
export { CommitOutcomeUnknownError, databaseUnavailable } from './postgres/postgres-write-queue.ts';
