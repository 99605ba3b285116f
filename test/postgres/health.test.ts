import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../reference-server/src/internal/logger.ts';
import { type ApiResponse, call } from '../support/api.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 13: "the service answers 503 in the envelope while [the database] is down and recovers by itself".
// A load balancer asks GET /health to decide whether an instance gets traffic: it must say 503 while the
// instance cannot reach its database, answer promptly even when the database hangs rather than refuses, and
// say 200 again by itself. Real services, a real PostgreSQL stopped and started, a real TCP path cut.

reportIfPostgresMissing();

type Logged = { level: string; message: string };
const capture = (into: Logged[]): Logger => ({
  info: (message) => into.push({ level: 'info', message }),
  warn: (message) => into.push({ level: 'warn', message }),
  error: (message) => into.push({ level: 'error', message }),
});
const health = (server: RunningServer) => call(server.baseUrl, 'GET', '/health');
const ready = (server: RunningServer) => call(server.baseUrl, 'GET', '/health/ready');
const live = (server: RunningServer) => call(server.baseUrl, 'GET', '/health/live');

/** The 503 a load balancer sees: the error envelope, `service_unavailable`, `Retry-After: 1`, never cached. */
function expectUnavailable(answer: ApiResponse): void {
  expect(answer.status).toBe(503);
  expect(answer.body).toEqual({
    meta: {
      statusCode: 503,
      message: 'The service cannot reach its database right now.',
      code: 'service_unavailable',
      requestId: expect.stringMatching(/^req_/),
    },
  });
  expect(answer.headers.get('retry-after')).toBe('1');
  expect(answer.headers.get('cache-control')).toBe('no-store');
}

function expectUp(answer: ApiResponse): void {
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({ data: { status: 'ok' } });
}

describe('GET /health on SQLite', () => {
  it('answers 200 while the database handle is open, and 503 in the envelope once it is closed', async () => {
    const logs: Logged[] = [];
    const server = await startServer({}, { logger: capture(logs) });
    try {
      expectUp(await health(server));
      expect((await ready(server)).body).toMatchObject({ data: { status: 'ready' } });
      server.service.db.close();
      for (let n = 0; n < 3; n += 1) expectUnavailable(await health(server));
      // Issue 28: the balancer's probe says 503; the supervisor's says the process itself is alive.
      expectUnavailable(await ready(server));
      expect((await live(server)).body).toMatchObject({ data: { status: 'live' } });
      // Said once, not once per probe.
      expect(logs.filter((entry) => entry.message.startsWith('health check'))).toEqual([
        {
          level: 'warn',
          message: 'health check: the database does not answer; /health answers 503 until it does',
        },
      ]);
    } finally {
      await server.close();
    }
  });
});

/**
 * A TCP relay in front of PostgreSQL whose path can be cut without refusing anything: while `cut`, bytes are
 * held in both directions (a dead link, a paused database host), then delivered when it heals.
 */
async function startRelay(target: number) {
  let cut = false;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = netConnect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => undefined);
    }
    const relay = (to: Socket) => (chunk: Buffer) => {
      if (cut) held.push(() => to.write(chunk));
      else to.write(chunk);
    };
    client.on('data', relay(upstream));
    upstream.on('data', relay(client));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      cut = true;
    },
    heal() {
      cut = false;
      for (const send of held.splice(0)) send();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.runIf(postgresAvailable)('GET /health on PostgreSQL', () => {
  const scratch = useScratchDatabase();
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-health-'));

  afterAll(async () => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('503 in the envelope while PostgreSQL is stopped, 200 again by itself once it is started', async () => {
    const logs: Logged[] = [];
    const databaseUrl = await scratch.postgres.createDatabase('restart');
    const server = await startServer(
      { databaseUrl },
      { logger: capture(logs), dbPath: join(folder, 'restart.db') },
    );
    try {
      expectUp(await health(server));
      expect((await ready(server)).status).toBe(200);
      const restarting = scratch.postgres.restart({ downMs: 3_000 });
      await vi.waitFor(async () => expect((await health(server)).status).toBe(503), {
        timeout: 5_000,
        interval: 50,
      });
      expectUnavailable(await health(server));
      // Issue 28: /health/ready says 503 while the database is stopped; /health/live still answers 200.
      expectUnavailable(await ready(server));
      expect((await live(server)).status).toBe(200);
      await restarting;
      // No restart of the service: the pool connects again on the next probe.
      await vi.waitFor(async () => expect((await health(server)).status).toBe(200), {
        timeout: 15_000,
        interval: 100,
      });
      expectUp(await health(server));
      await vi.waitFor(async () => expect((await ready(server)).status).toBe(200), {
        timeout: 5_000,
        interval: 100,
      });
      expect((await ready(server)).body).toMatchObject({ data: { status: 'ready' } });
      const said = logs.filter((entry) => entry.message.startsWith('health check'));
      expect(said).toEqual([
        {
          level: 'warn',
          message: 'health check: the database does not answer; /health answers 503 until it does',
        },
        { level: 'info', message: 'health check: the database answers again; /health answers 200' },
      ]);
    } finally {
      await server.close();
    }
  });

  it('a database that stops answering (the path cut, nothing refused) gets 503, not a hung probe; 200 when it heals', async () => {
    const databaseUrl = new URL(await scratch.postgres.createDatabase('cut'));
    const relay = await startRelay(scratch.postgres.port);
    databaseUrl.port = String(relay.port);
    const server = await startServer(
      { databaseUrl: databaseUrl.toString() },
      { dbPath: join(folder, 'cut.db') },
    );
    try {
      expectUp(await health(server));
      relay.cut();
      // The pool's idle connection takes the SELECT 1 and never hears back: without the probe's own timeout
      // these would wait for TCP to give up (minutes), and this test would time out.
      const answers = await Promise.all(Array.from({ length: 5 }, () => health(server)));
      for (const answer of answers) expectUnavailable(answer);
      expectUnavailable(await health(server));
      relay.heal();
      await vi.waitFor(async () => expect((await health(server)).status).toBe(200), {
        timeout: 15_000,
        interval: 100,
      });
    } finally {
      await server.close();
      await relay.close();
    }
  });

  it('probes arriving together share one query: ten at once while no connection is free make one SELECT 1', async () => {
    const databaseUrl = await scratch.postgres.createDatabase('coalesce');
    const server = await startServer(
      { databaseUrl, databasePoolSize: 1 },
      { dbPath: join(folder, 'coalesce.db') },
    );
    const pool = server.service.backend.pool;
    if (!pool) throw new Error('the service runs on PostgreSQL');
    try {
      expectUp(await health(server));
      // The pool's only connection is busy (a long request, say): a probe's query waits for it.
      const busy = await pool.connect();
      const queries = vi.spyOn(pool, 'query');
      let answers: ApiResponse[];
      try {
        answers = await Promise.all(Array.from({ length: 10 }, () => health(server)));
      } finally {
        busy.release();
      }
      for (const answer of answers) expectUnavailable(answer);
      const probes = queries.mock.calls.filter(
        // A query given as a config object (the probe's form); other callers pass text.
        ([query]) => (query as unknown as { text?: string }).text === 'SELECT 1',
      );
      expect(probes).toHaveLength(1);
      // The connection is free again: the next probe answers 200.
      await vi.waitFor(async () => expect((await health(server)).status).toBe(200), { timeout: 15_000 });
    } finally {
      await server.close();
    }
  });
});
