import type { TestProject } from 'vitest/node';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { openPool } from './open-pool.ts';
import { startPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The `postgres` maintenance database of the scratch cluster the `postgres` project shares across its test
     * files (`postgres://postgres@127.0.0.1:<port>/postgres`); absent in every other project.
     */
    scratchPostgresUrl?: string;
    /** A database of that cluster with every migration applied, to copy (`CREATE DATABASE … TEMPLATE`). */
    scratchPostgresTemplate?: string;
  }
}

/**
 * Global setup of the `postgres` vitest project: one scratch PostgreSQL cluster for the whole run, which
 * `startServer` (test/support/server.ts) gives a fresh database per database file a suite asks for. *Why one
 * cluster rather than one per test file:* an initdb and a start cost about a second each, times every file of
 * the API, reliability and contract suites. Each database is copied from one migrated here: a service still
 * runs `migratePostgres` on start, and finds every migration applied (the migrations themselves are tested in
 * test/postgres/migrate-postgres.test.ts). The suites that restart or stop PostgreSQL (`test/postgres/`) keep a
 * cluster of their own.
 *
 * @example
 * // vitest.config.ts, in the postgres project:
 * globalSetup: ['./test/support/postgres-global-setup.ts'],
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgres();
  const template = 'servicepay_migrated';
  const pool = openPool(await cluster.createDatabase(template), { max: 1 });
  try {
    await migratePostgres(pool);
  } finally {
    // A database is copied only while nobody is connected to it.
    await pool.end();
  }
  project.provide('scratchPostgresUrl', cluster.urlFor('postgres'));
  project.provide('scratchPostgresTemplate', template);
  return () => cluster.stop();
}
