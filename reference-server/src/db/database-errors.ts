/**
 * How the service tells a database outage, or a full disk, from its own fault, whichever database it runs on:
 * the error handler answers these 503 `service_unavailable` (retry later, with the same `Idempotency-Key`), not
 * 500. A full disk is told by the error's code alone (`storage-errors.ts`, no driver needed).
 */
export { CommitOutcomeUnknownError, databaseUnavailable } from './postgres/postgres-errors.ts';
export { storageFull } from './storage-errors.ts';
