import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect, vi } from 'vitest';
import { STORAGE_FULL_RETRY_AFTER_SECONDS } from '../../reference-server/src/errors.ts';
import type { ServerConfigOverrides } from '../../reference-server/src/index.ts';
import { type ApiResponse, call, expectError } from './api.ts';
import { postgresServerUser, startPostgres } from './postgres.ts';
import { type RunningServer, type StartOptions, startServer } from './server.ts';
import { mountSmallDisk, ownedFolder, type SmallDisk } from './small-disk.ts';

/** A running server whose data lives on a small disk of its own, which the test fills and frees. */
export interface FullDiskServer {
  server: RunningServer;
  disk: SmallDisk;
  /** Stops the server, drops what it kept on PostgreSQL, unmounts the disk. */
  close(): Promise<void>;
}

const onPostgres = process.env.SERVICEPAY_TEST_STORE === 'postgres';

/**
 * The real reference server (`startServer`) with its data on a real tmpfs of `sizeMiB`: on SQLite the database
 * file, its WAL and its index; on PostgreSQL (`SERVICEPAY_TEST_STORE=postgres`) a database created in a
 * tablespace on that disk, on a scratch cluster of its own, so that every
 * table's file grows there and PostgreSQL's own WAL stays on the cluster's disk, as with a data volume that
 * fills. The test fills the disk (`disk.fill()`) and frees it (`disk.free()`).
 *
 * @example
 * const { server, disk, close } = await startServerOnSmallDisk();
 * disk.fill(); // every write now meets ENOSPC
 */
export async function startServerOnSmallDisk(
  sizeMiB = 64,
  config: ServerConfigOverrides = {},
  options: Omit<StartOptions, 'dbPath'> = {},
): Promise<FullDiskServer> {
  const disk = mountSmallDisk(sizeMiB, onPostgres ? postgresServerUser : undefined);
  if (!onPostgres) {
    try {
      const server = await startServer(config, { ...options, dbPath: join(disk.path, 'servicepay.db') });
      return {
        server,
        disk,
        async close() {
          disk.free();
          await server.close();
          disk.remove();
        },
      };
    } catch (error) {
      disk.remove();
      throw error;
    }
  }
  // A cluster of its own, never the project's shared one: shared buffers are the cluster's, so while this
  // tablespace is full another test's backend that has to evict one of its dirty pages fails with ENOSPC (a
  // CREATE DATABASE of a concurrent file was refused so: "could not write block 0 in file pg_tblspc/…").
  const cluster = await startPostgres();
  const adminUrl = cluster.urlFor('postgres');
  const suffix = Math.random().toString(36).slice(2, 10);
  const tablespace = `small_${suffix}`;
  const database = `full_${suffix}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-full-disk-'));
  let server: RunningServer | undefined;
  try {
    const location = ownedFolder(disk, 'tablespace', postgresServerUser);
    await admin.query(`CREATE TABLESPACE ${tablespace} LOCATION '${location}'`);
    await admin.query(`CREATE DATABASE ${database} TABLESPACE ${tablespace}`);
    const url = new URL(adminUrl as string);
    url.pathname = `/${database}`;
    server = await startServer(
      { ...config, databaseUrl: url.toString() },
      { ...options, dbPath: join(folder, 'servicepay.db') },
    );
  } catch (error) {
    await admin.end();
    await cluster.stop();
    disk.remove();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  const running = server;
  return {
    server: running,
    disk,
    async close() {
      disk.free();
      try {
        await running.close();
        // Not WITH (FORCE): a pool's client may still be closing its connection, and a connection the server
        // ends under it is an uncaught error in this process. Its session ends within moments.
        for (let attempt = 1; ; attempt++) {
          try {
            await admin.query(`DROP DATABASE IF EXISTS ${database}`);
            break;
          } catch (error) {
            // 55006: the database is being accessed by other users.
            if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        await admin.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
      } finally {
        await admin.end();
        await cluster.stop();
        disk.remove();
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Asserts a write refused for lack of space: 503 `service_unavailable` in the envelope, with the `Retry-After`
 * of a full disk.
 *
 * @example
 * disk.fill();
 * expectStorageFull(await call(server.baseUrl, 'POST', '/api/webhooks', { token, json }));
 */
export function expectStorageFull(response: ApiResponse): void {
  expectError(response, 503, 'service_unavailable');
  expect(response.headers.get('retry-after')).toBe(String(STORAGE_FULL_RETRY_AFTER_SECONDS));
}

/**
 * Waits for `/health` to answer 200 again once space is back: within a probe or two (a probe write a second at
 * most, made by `/health` itself).
 *
 * @example
 * disk.free();
 * await healthyAgain(server);
 */
export async function healthyAgain(server: RunningServer): Promise<void> {
  await vi.waitFor(async () => expect((await call(server.baseUrl, 'GET', '/health')).status).toBe(200), {
    timeout: 10_000,
    interval: 250,
  });
}
