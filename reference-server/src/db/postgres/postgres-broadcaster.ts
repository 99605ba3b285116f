import type pg from 'pg';
import type { Logger } from '../../internal/logger.ts';
import {
  type Broadcaster,
  InProcessBroadcaster,
  type SessionUpdate,
  type SessionUpdateListener,
} from '../broadcaster.ts';
import type { WriteContext } from '../repositories.ts';
import { type GapReason, PostgresNotificationChannel, type Queryable } from './notification-channel.ts';

/** The channel every instance of one service database listens on. */
export const SESSION_UPDATES_CHANNEL = 'servicepay_session_updates';

export interface PostgresBroadcasterOptions {
  /** The instance's pool: publishing, and reading the rare message too large for a notification. */
  pool: pg.Pool;
  /** Where the dedicated listening connection goes, e.g. `{ connectionString: SERVICEPAY_DATABASE_URL }`. */
  connection: pg.ClientConfig;
  /** Defaults to `SESSION_UPDATES_CHANNEL`; two services sharing one database would need two. */
  channel?: string;
  /**
   * Updates may have been missed (the listening connection was lost and is back, or a publish from this
   * instance failed): every open stream should replay its session from the `events` table after the last seq
   * it sent. Called on the instance that missed them.
   */
  onGap?(reason: GapReason | 'publish_failed'): void;
  logger?: Logger;
  reconnect?: { initialMs?: number; maxMs?: number };
  pingIntervalMs?: number;
}

/**
 * The `Broadcaster` for several instances on one PostgreSQL database: `publish` sends the update on one
 * `LISTEN/NOTIFY` channel (payload: the `SessionUpdate` JSON), and every instance, the publisher included,
 * delivers it to its own subscribers of that session from its one listening connection. So a transition
 * committed on instance A reaches a push stream held by instance B, and each subscriber hears each update
 * once, in the order PostgreSQL delivered it.
 *
 * What it cannot promise by itself: a notification sent while an instance's listening connection was down is
 * lost to that instance. It reconnects with backoff and then calls `onGap`, and the push stream replays from
 * the `events` table by seq (subscribe first, then replay, dropping seqs already sent), as it does for a
 * browser's `Last-Event-ID`. An update whose JSON is 8000 bytes or more travels through `push_overflow`.
 *
 * @example
 * const broadcaster = new PostgresBroadcaster({ pool, connection: { connectionString: url }, onGap: replayAll });
 * await broadcaster.start();
 * const stop = broadcaster.subscribe('ses_…', (update) => stream.send(update));
 * broadcaster.publish({ sessionId: 'ses_…', seq: 7, message });
 * stop();
 * await broadcaster.close();
 */
export class PostgresBroadcaster implements Broadcaster {
  private readonly local = new InProcessBroadcaster();
  private readonly channel: PostgresNotificationChannel;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: PostgresBroadcasterOptions) {
    this.channel = new PostgresNotificationChannel({
      connection: options.connection,
      pool: options.pool,
      channel: options.channel ?? SESSION_UPDATES_CHANNEL,
      onMessage: (payload) => this.deliver(payload),
      ...(options.onGap ? { onGap: options.onGap } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.reconnect ? { reconnect: options.reconnect } : {}),
      ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    });
  }

  /** Starts listening; rejects when the database cannot be reached at all. */
  start(): Promise<void> {
    return this.channel.start();
  }

  /** True while this instance's listening connection is up. */
  get listening(): boolean {
    return this.channel.listening;
  }

  /**
   * Sends the update to every instance in its own statement (the interface is synchronous; the send is not).
   * A failed send is logged and reported to this instance's `onGap('publish_failed')`. Prefer `publishIn`
   * inside the transaction that commits the transition: then the notification leaves exactly at commit.
   */
  publish(update: SessionUpdate): void {
    const sending = this.channel
      .publish(JSON.stringify(update))
      .catch((error: Error) => {
        this.options.logger?.error('push update not sent to the other instances', {
          sessionId: update.sessionId,
          seq: update.seq,
          error: error.message,
        });
        this.options.onGap?.('publish_failed');
      })
      .finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  /**
   * Sends the update on `queryable`, the client of the transaction that commits the transition: PostgreSQL
   * delivers it at commit, never for a rollback, and in commit order with that instance's other commits.
   */
  publishIn(queryable: Queryable, update: SessionUpdate): Promise<void> {
    return this.channel.publishIn(queryable, JSON.stringify(update));
  }

  /**
   * Inside the job's transaction when it has one (PostgreSQL), sent with its `COMMIT` in one round trip, else
   * after its commit. A send the driver refused (nothing reached PostgreSQL, so the commit went ahead without it)
   * is handled as `publish` handles a failed send: logged, and this instance's streams replay (`onGap`).
   */
  publishOnCommit(context: WriteContext, update: SessionUpdate): void {
    if (!context.beforeCommit) {
      context.afterCommit(() => this.publish(update));
      return;
    }
    context.beforeCommit((connection) =>
      this.publishIn(connection, update).catch((error: Error) => {
        this.options.logger?.error('push update not sent with its commit', {
          sessionId: update.sessionId,
          seq: update.seq,
          error: error.message,
        });
        this.options.onGap?.('publish_failed');
      }),
    );
  }

  subscribe(sessionId: string, listener: SessionUpdateListener): () => void {
    return this.local.subscribe(sessionId, (update) => {
      // One stream's failure must not keep the update from the others.
      try {
        listener(update);
      } catch (error) {
        this.options.logger?.error('push listener threw', { sessionId, error: (error as Error).message });
      }
    });
  }

  /** How many sessions have at least one subscriber on this instance. */
  get watchedSessions(): number {
    return this.local.watchedSessions;
  }

  /** Waits for sends in flight, then stops listening. Subscribers stay registered but hear nothing more. */
  async close(): Promise<void> {
    await Promise.all(this.pending);
    await this.channel.close();
  }

  private deliver(payload: string): void {
    let update: SessionUpdate;
    try {
      update = JSON.parse(payload) as SessionUpdate;
    } catch {
      this.options.logger?.warn('push channel carried a message that is not JSON; dropped');
      return;
    }
    if (
      typeof update?.sessionId !== 'string' ||
      typeof update.seq !== 'number' ||
      typeof update.message !== 'object'
    ) {
      this.options.logger?.warn('push channel carried a message that is not a session update; dropped');
      return;
    }
    this.local.publish(update);
  }
}
