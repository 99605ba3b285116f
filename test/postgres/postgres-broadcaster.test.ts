import type { StatusMessage } from '@servicepay/node/protocol';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionUpdate } from '../../reference-server/src/db/broadcaster.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import {
  PostgresBroadcaster,
  SESSION_UPDATES_CHANNEL,
} from '../../reference-server/src/db/postgres/postgres-broadcaster.ts';
import type { WriteContext } from '../../reference-server/src/db/repositories.ts';
import type { Logger } from '../../reference-server/src/index.ts';
import { eventually } from '../support/child-process.ts';
import { openPool } from '../support/open-pool.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 13: "the push stream fed through LISTEN/NOTIFY behind the Broadcaster interface, so a transition committed
// on instance A reaches a stream open on instance B", and "no connection leak … when the database restarts".
// Two broadcasters on two pools stand for two instances of the service on one real PostgreSQL.

reportIfPostgresMissing();

const message = (
  sessionId: string,
  status: StatusMessage['status'],
  merchantName = 'Ada Stores',
): StatusMessage => ({
  status,
  reason: null,
  session: {
    id: sessionId,
    reference: `order-${sessionId}`,
    status,
    environment: 'test',
    amount: 500_000,
    currency: 'NGN',
    merchantName,
    expiresAt: '2026-11-23T18:00:00.000Z',
  },
  virtualAccount: null,
  mismatch: null,
});

const update = (sessionId: string, seq: number, status: StatusMessage['status'] = 'awaiting_payment') => ({
  sessionId,
  seq,
  message: message(sessionId, status),
});

/** A logger that keeps what it was told, so a test can read it (and nothing reaches the console). */
function recordingLogger(): Logger & { entries: Array<{ level: string; message: string }> } {
  const entries: Array<{ level: string; message: string }> = [];
  const log = (level: string) => (text: string) => {
    entries.push({ level, message: text });
  };
  return { entries, info: log('info'), warn: log('warn'), error: log('error') };
}

interface Instance {
  pool: pg.Pool;
  broadcaster: PostgresBroadcaster;
  gaps: string[];
  logger: ReturnType<typeof recordingLogger>;
}

describe.runIf(postgresAvailable)('PostgresBroadcaster: push across instances through LISTEN/NOTIFY', () => {
  const scratch = useScratchDatabase();
  let a: Instance;
  let b: Instance;
  const unsubscribes: Array<() => void> = [];

  const instance = async (name: string): Promise<Instance> => {
    // Its 'error' listener takes an idle client's lost connection (the restart tests); the next query reconnects.
    const pool = openPool(scratch.url, { max: 4, application_name: `servicepay-${name}` });
    const gaps: string[] = [];
    const logger = recordingLogger();
    const broadcaster = new PostgresBroadcaster({
      pool,
      connection: { connectionString: scratch.url },
      onGap: (reason) => gaps.push(reason),
      logger,
      reconnect: { initialMs: 50, maxMs: 400 },
    });
    await broadcaster.start();
    return { pool, broadcaster, gaps, logger };
  };

  /** Collects what one subscriber hears. */
  const listen = (on: Instance, sessionId: string) => {
    const heard: SessionUpdate[] = [];
    const stop = on.broadcaster.subscribe(sessionId, (received) => heard.push(received));
    unsubscribes.push(stop);
    return { heard, stop, seqs: () => heard.map((received) => received.seq) };
  };

  /**
   * Waits until a marker published after everything else has reached both instances. Notifications reach one
   * listening connection in commit order, so once the marker is heard, whatever was sent before it (a
   * duplicate included) has been heard too: "exactly once" is checked without sleeping.
   */
  let markerSeq = 0;
  const drain = async () => {
    markerSeq++;
    const onA = listen(a, 'ses_marker');
    const onB = listen(b, 'ses_marker');
    await a.pool.query('SELECT pg_notify($1, $2)', [
      SESSION_UPDATES_CHANNEL,
      JSON.stringify(update('ses_marker', markerSeq)),
    ]);
    await eventually(
      async () => (onA.seqs().includes(markerSeq) && onB.seqs().includes(markerSeq)) || undefined,
    );
    onA.stop();
    onB.stop();
  };

  const listeners = async (): Promise<number> =>
    (
      await a.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'servicepay-listener'",
      )
    ).rows[0]?.n ?? -1;

  beforeAll(async () => {
    const setup = openPool(scratch.url, { max: 1 });
    await migratePostgres(setup);
    await setup.end();
    a = await instance('a');
    b = await instance('b');
  });

  afterEach(() => {
    for (const stop of unsubscribes.splice(0)) stop();
  });

  afterAll(async () => {
    for (const each of [a, b]) {
      await each?.broadcaster.close();
      await each?.pool.end();
    }
  });

  it('an update published on A reaches the subscribers of that session on A and on B, each once, in order', async () => {
    const onA1 = listen(a, 'ses_1');
    const onA2 = listen(a, 'ses_1');
    const onB = listen(b, 'ses_1');
    const otherSession = listen(b, 'ses_2');

    for (const seq of [1, 2]) await a.broadcaster.publishIn(a.pool, update('ses_1', seq));
    await b.broadcaster.publishIn(b.pool, update('ses_1', 3, 'successful'));
    await drain();

    for (const subscriber of [onA1, onA2, onB]) expect(subscriber.seqs()).toEqual([1, 2, 3]);
    expect(onB.heard[2]).toEqual(update('ses_1', 3, 'successful'));
    expect(otherSession.heard).toEqual([]);
    expect(await listeners()).toBe(2);
  });

  it('publish() (the synchronous Broadcaster method) reaches both instances too', async () => {
    const onA = listen(a, 'ses_sync');
    const onB = listen(b, 'ses_sync');
    b.broadcaster.publish(update('ses_sync', 41));
    await eventually(async () => (onA.heard.length > 0 && onB.heard.length > 0) || undefined);
    await drain();
    expect(onA.seqs()).toEqual([41]);
    expect(onB.seqs()).toEqual([41]);
  });

  it('after unsubscribing, a subscriber hears nothing more; the other instance still does', async () => {
    const onA = listen(a, 'ses_3');
    const onB = listen(b, 'ses_3');
    await a.broadcaster.publishIn(a.pool, update('ses_3', 10));
    await drain();
    const watchedBefore = b.broadcaster.watchedSessions;
    onB.stop();
    expect(b.broadcaster.watchedSessions).toBe(watchedBefore - 1);

    await a.broadcaster.publishIn(a.pool, update('ses_3', 11, 'successful'));
    await drain();
    expect(onA.seqs()).toEqual([10, 11]);
    expect(onB.seqs()).toEqual([10]);
  });

  it('a notification sent inside a transaction arrives at commit, and never for a rollback', async () => {
    const onB = listen(b, 'ses_tx');
    const client = await a.pool.connect();
    try {
      await client.query('BEGIN');
      await a.broadcaster.publishIn(client, update('ses_tx', 20));
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      await a.broadcaster.publishIn(client, update('ses_tx', 21));
      await drain();
      expect(onB.seqs()).toEqual([]); // not committed yet: nobody heard of it
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await drain();
    expect(onB.seqs()).toEqual([21]);
  });

  it("publishOnCommit sends the update with the job's COMMIT; one the driver refuses before it leaves is logged and reported as a gap", async () => {
    const withCommit: Array<(connection: pg.PoolClient) => Promise<void>> = [];
    const context = {
      afterCommit: () => {
        throw new Error('a job with a COMMIT sends its push with it, not after');
      },
      beforeCommit: (send: (connection: pg.PoolClient) => Promise<void>) => withCommit.push(send),
    } as unknown as WriteContext;
    const onB = listen(b, 'ses_with_commit');
    a.broadcaster.publishOnCommit(context, update('ses_with_commit', 40));
    a.broadcaster.publishOnCommit(context, update('ses_with_commit', 41));
    expect(withCommit).toHaveLength(2);

    // As the write queue sends it: inside the job's transaction, right before COMMIT; heard at commit.
    const client = await a.pool.connect();
    try {
      await client.query('BEGIN');
      await withCommit[0]?.(client);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await drain();
    expect(onB.seqs()).toEqual([40]);

    // The driver refuses the second before it reaches PostgreSQL (the commit goes ahead without it): the send
    // does not reject, the instance logs it and its streams replay from the events table.
    const gapsBefore = a.gaps.length;
    const refusing = { query: () => Promise.reject(new Error('Client was closed and is not queryable')) };
    await expect(withCommit[1]?.(refusing as unknown as pg.PoolClient)).resolves.toBeUndefined();
    expect(a.gaps.slice(gapsBefore)).toEqual(['publish_failed']);
    expect(a.logger.entries).toContainEqual({
      level: 'error',
      message: 'push update not sent with its commit',
    });
  });

  it('an update of 8000 bytes or more goes through push_overflow and arrives whole, before the next one', async () => {
    const onA = listen(a, 'ses_big');
    const onB = listen(b, 'ses_big');
    // 4000 two-byte characters: under NOTIFY's limit in characters, over it in bytes.
    const big = {
      sessionId: 'ses_big',
      seq: 30,
      message: message('ses_big', 'awaiting_payment', 'Ñ'.repeat(4000)),
    };
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(8000);
    await a.broadcaster.publishIn(a.pool, big);
    await a.broadcaster.publishIn(a.pool, update('ses_big', 31, 'successful'));
    await drain();
    for (const subscriber of [onA, onB]) {
      expect(subscriber.seqs()).toEqual([30, 31]);
      expect(subscriber.heard[0]).toEqual(big);
    }
    const stored = await a.pool.query('SELECT count(*)::int AS n FROM push_overflow');
    expect(stored.rows[0].n).toBe(1);
  });

  it('a message on the channel that is not a session update is dropped with a warning; delivery goes on', async () => {
    const onB = listen(b, 'ses_4');
    await a.pool.query('SELECT pg_notify($1, $2)', [SESSION_UPDATES_CHANNEL, 'not json']);
    await a.pool.query('SELECT pg_notify($1, $2)', [SESSION_UPDATES_CHANNEL, '{"sessionId":"ses_4"}']);
    // A subscriber that throws does not keep the update from the next one.
    unsubscribes.push(
      b.broadcaster.subscribe('ses_4', () => {
        throw new Error('this stream broke');
      }),
    );
    await a.broadcaster.publishIn(a.pool, update('ses_4', 50));
    await drain();
    expect(onB.seqs()).toEqual([50]);
    expect(b.logger.entries.map((entry) => entry.message)).toEqual(
      expect.arrayContaining([
        'push channel carried a message that is not JSON; dropped',
        'push channel carried a message that is not a session update; dropped',
        'push listener threw',
      ]),
    );
  });

  it('after the database restarts, each instance reconnects by itself, reports the gap, and delivery resumes without a leaked connection', async () => {
    const onA = listen(a, 'ses_5');
    const onB = listen(b, 'ses_5');
    await a.broadcaster.publishIn(a.pool, update('ses_5', 60));
    await drain();
    a.gaps.length = 0;
    b.gaps.length = 0;

    // Down for a second: with 50–400 ms backoff each instance fails to reconnect several times first.
    const restarted = scratch.postgres.restart({ downMs: 1_000 });
    await eventually(async () => (!a.broadcaster.listening && !b.broadcaster.listening) || undefined);
    // A publish while the database is down fails, and its own instance is told to replay.
    a.broadcaster.publish(update('ses_5', 61));
    await restarted;

    await eventually(async () => (a.broadcaster.listening && b.broadcaster.listening) || undefined);
    expect(b.gaps).toEqual(['reconnected']);
    expect(a.gaps.sort()).toEqual(['publish_failed', 'reconnected']);
    expect(
      b.logger.entries.filter((entry) => entry.message.includes('could not reconnect yet')).length,
    ).toBeGreaterThan(0);

    await b.broadcaster.publishIn(b.pool, update('ses_5', 62, 'successful'));
    await drain();
    expect(onA.seqs()).toEqual([60, 62]);
    expect(onB.seqs()).toEqual([60, 62]);
    // One listening connection per instance, whatever the number of failed attempts.
    expect(await listeners()).toBe(2);
    const perPool = await a.pool.query<{ application_name: string; n: number }>(
      `SELECT application_name, count(*)::int AS n FROM pg_stat_activity
        WHERE application_name LIKE 'servicepay-%' GROUP BY 1 ORDER BY 1`,
    );
    for (const row of perPool.rows)
      expect(row.n).toBeLessThanOrEqual(row.application_name === 'servicepay-listener' ? 2 : 4);
  });

  it('after a crash of the database (immediate stop, crash recovery on start) the same holds', async () => {
    const onA = listen(a, 'ses_6');
    const onB = listen(b, 'ses_6');
    a.gaps.length = 0;
    b.gaps.length = 0;
    await scratch.postgres.restart({ mode: 'immediate', downMs: 300 });
    await eventually(async () => (a.gaps.length > 0 && b.gaps.length > 0) || undefined);
    expect([a.gaps, b.gaps]).toEqual([['reconnected'], ['reconnected']]);
    await a.broadcaster.publishIn(a.pool, update('ses_6', 70, 'successful'));
    await drain();
    expect(onA.seqs()).toEqual([70]);
    expect(onB.seqs()).toEqual([70]);
    expect(await listeners()).toBe(2);
  });

  it('start() rejects when the database cannot be reached, and can be called again', async () => {
    const unreachable = new PostgresBroadcaster({
      pool: a.pool,
      connection: { host: '127.0.0.1', port: 1, user: 'postgres', database: 'servicepay' },
    });
    await expect(unreachable.start()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(unreachable.start()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(unreachable.listening).toBe(false);
    await unreachable.close();
  });

  it('close() ends the listening connection; a closed broadcaster does not reconnect', async () => {
    const c = await instance('c');
    expect(await listeners()).toBe(3);
    await c.broadcaster.close();
    await c.pool.end();
    await eventually(async () => ((await listeners()) === 2 ? true : undefined));
    expect(c.broadcaster.listening).toBe(false);
    expect(c.gaps).toEqual([]);
  });
});
