import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import {
  type Clock,
  createBusiness,
  createService,
  type Logger,
  type ServerConfigOverrides,
  type Service,
  silentLogger,
} from '../../reference-server/src/index.ts';
import { type ScratchPostgres, startPostgres } from './postgres.ts';

export interface RunningServer {
  baseUrl: string;
  /** The widget hosts' base URLs (`${widgetUrls.test}/latest/widget.js`). */
  widgetUrls: { test: string; live: string };
  /** Drops every open connection to the API (push streams included), as a network cut would. */
  dropConnections(): void;
  dbPath: string;
  service: Service;
  createBusiness(options?: { name?: string; kycApproved?: boolean }): Promise<CreatedBusiness>;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /** Reuse a database file (restart tests); a fresh temporary one otherwise. */
  dbPath?: string;
}

/**
 * The real reference server, in this process, on a free loopback port over a real SQLite file in a temporary
 * folder, with webhooks on the fast schedule. `close()` stops it and removes the folder it made.
 */
/**
 * `SERVICEPAY_TEST_STORE=postgres` runs a suite's servers on PostgreSQL instead of SQLite: one scratch cluster
 * per test file (stopped when the worker exits), one database per database file the suite asks for, so a
 * restart on the same `dbPath` finds the same data. The file at `dbPath` then keeps the simulated bank's books.
 */
const onPostgres = process.env.SERVICEPAY_TEST_STORE === 'postgres';
let cluster: Promise<ScratchPostgres> | undefined;
const databases = new Map<string, Promise<string>>();

function databaseFor(dbPath: string): Promise<string> {
  let url = databases.get(dbPath);
  if (!url) {
    cluster ??= startPostgres();
    url = cluster.then((postgres) => postgres.createDatabase(`t_${randomBytes(6).toString('hex')}`));
    databases.set(dbPath, url);
  }
  return url;
}

export async function startServer(
  config: ServerConfigOverrides = {},
  options: StartOptions = {},
): Promise<RunningServer> {
  const folder = options.dbPath ? undefined : mkdtempSync(join(tmpdir(), 'servicepay-test-'));
  const dbPath = options.dbPath ?? join(folder as string, 'servicepay.db');
  const databaseUrl = onPostgres && config.databaseUrl === undefined ? await databaseFor(dbPath) : undefined;
  const service = createService(
    {
      port: 0,
      testWidgetPort: 0,
      liveWidgetPort: 0,
      webhooks: { schedule: 'fast' },
      ...config,
      dbPath,
      ...(databaseUrl ? { databaseUrl } : {}),
    },
    { logger: options.logger ?? silentLogger, ...(options.clock ? { clock: options.clock } : {}) },
  );
  const { url, server, widgetUrls } = await service.start();
  const clock = options.clock;
  return {
    baseUrl: url,
    widgetUrls,
    dropConnections: () => server.closeAllConnections(),
    dbPath,
    service,
    createBusiness: ({ name = 'Test Shop', kycApproved = false } = {}) =>
      createBusiness(service.deps.store, name, kycApproved, clock ? clock.now() : Date.now()),
    async close() {
      await service.close();
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
  };
}
