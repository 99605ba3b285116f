import pg from 'pg';
import type { Logger } from '../../internal/logger.ts';
import type { Queryable } from './postgres-runner.ts';

export type { Queryable } from './postgres-runner.ts';

/** Why listeners may have missed messages, so that they read what they missed from the tables. */
export type GapReason =
  /** The listening connection was lost and is back: anything notified while it was away never arrived. */
  | 'reconnected'
  /** An oversized message's row was gone (deleted as stale) by the time it was read. */
  | 'overflow_missing';

export interface NotificationChannelOptions {
  /** Where the dedicated listening connection goes (its own `pg.Client`, never one of the pool's). */
  connection: pg.ClientConfig;
  /** Publishing and reading oversized messages go through this pool. */
  pool: pg.Pool;
  /** The `LISTEN` channel: one per service database, shared by every instance. */
  channel: string;
  /** Every message on the channel, this instance's own included, in the order PostgreSQL delivered them. */
  onMessage(payload: string): void;
  /** Messages may have been missed (see `GapReason`); called after listening has resumed. */
  onGap?(reason: GapReason): void;
  logger?: Logger;
  /** Reconnection delays: doubling from `initialMs` up to `maxMs`, each with up to 50 % random jitter. */
  reconnect?: { initialMs?: number; maxMs?: number };
  /** A `SELECT 1` on the listening connection this often finds a connection that died silently. 0: never. */
  pingIntervalMs?: number;
}

/**
 * `NOTIFY` refuses a payload of 8000 bytes or more. A larger message is written to `push_overflow` and the
 * notification carries this marker and the row's id. A payload that itself starts with the marker's `#` takes
 * the same path, so a marker can never be mistaken for a message.
 */
const OVERFLOW_MARKER = '#overflow:';
const MAX_NOTIFY_BYTES = 7999;
/** Overflow rows older than this are deleted by the next oversized publish. */
const OVERFLOW_KEEP_MS = 60_000;

/**
 * A PostgreSQL `LISTEN/NOTIFY` channel shared by every instance of the service: one dedicated listening
 * connection per instance, reconnected by itself with backoff when it is lost (a database restart, a network
 * cut), and `onGap('reconnected')` once it listens again, since PostgreSQL keeps no notification for a
 * connection that was not there. Messages are strings; one too large for `NOTIFY` goes through the
 * `push_overflow` table (see `OVERFLOW_MARKER`). Delivery to `onMessage` is in arrival order, one at a time.
 *
 * @example
 * const channel = new PostgresNotificationChannel({
 *   connection: { connectionString: url }, pool, channel: 'servicepay_session_updates',
 *   onMessage: (payload) => console.log(payload), onGap: () => replayFromEvents(),
 * });
 * await channel.start();
 * await channel.publish('{"hello":"world"}');
 * await channel.close();
 */
export class PostgresNotificationChannel {
  private client: pg.Client | undefined;
  private started = false;
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  /** Incoming messages are handled one after another, so an overflow read never lets a later message pass. */
  private queue: Promise<void> = Promise.resolve();
  private readonly initialMs: number;
  private readonly maxMs: number;

  constructor(private readonly options: NotificationChannelOptions) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.channel)) {
      throw new Error(
        `channel must be a plain lower-case identifier, not ${JSON.stringify(options.channel)}`,
      );
    }
    this.initialMs = options.reconnect?.initialMs ?? 100;
    this.maxMs = options.reconnect?.maxMs ?? 5_000;
  }

  /** True while the listening connection is up and listening. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /**
   * Opens the listening connection; rejects if this attempt fails (call it again to retry). Once started,
   * a lost connection is retried by itself until `close()`.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('the channel was already started');
    this.started = true;
    try {
      await this.connect();
    } catch (error) {
      this.started = false;
      throw error;
    }
    const every = this.options.pingIntervalMs ?? 30_000;
    if (every > 0) {
      this.pingTimer = setInterval(() => this.ping(), every);
      this.pingTimer.unref();
    }
  }

  /**
   * Sends `payload` to every instance listening, this one included. Through the pool, so it is its own
   * transaction: use `publishIn` to send from inside the transaction whose commit it announces.
   */
  async publish(payload: string, now = Date.now()): Promise<void> {
    await this.publishIn(this.options.pool, payload, now);
  }

  /**
   * Sends `payload` on `queryable`, typically the client of an open transaction: PostgreSQL delivers a
   * notification at commit and drops it on rollback, so a listener never hears of a change that did not
   * happen, and never misses one that did while its connection was up.
   */
  async publishIn(queryable: Queryable, payload: string, now = Date.now()): Promise<void> {
    const { text, values } = notificationStatement(this.options.channel, payload, now);
    await queryable.query(text, values);
  }

  /** Stops listening and reconnecting; waits for messages already received to be handled. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    const client = this.client;
    this.client = undefined;
    if (client) await endQuietly(client);
    await this.queue;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      application_name: 'servicepay-listener',
      // A reconnect to a host that drops packets must fail and be retried, not wait forever.
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      query_timeout: 10_000,
      ...this.options.connection,
    });
    // Until it is ours (listening), a failure is the caller's to handle through the rejected promise.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (client !== this.client || message.channel !== this.options.channel) return;
      const payload = message.payload ?? '';
      this.queue = this.queue.then(() => this.receive(payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.options.channel)}`);
    } catch (error) {
      await endQuietly(client);
      throw error;
    }
    if (this.closed) {
      await endQuietly(client);
      return;
    }
    this.client = client;
  }

  /** The listening connection failed or ended: forget it and reconnect (once per lost connection). */
  private lost(client: pg.Client, error?: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    void endQuietly(client);
    if (this.closed) return;
    this.options.logger?.warn('postgres listener lost its connection; reconnecting', {
      channel: this.options.channel,
      error: error?.message,
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    const delay = base / 2 + Math.random() * (base / 2);
    this.attempt++;
    this.reconnectTimer = setTimeout(async () => {
      if (this.closed) return;
      try {
        await this.connect();
      } catch (error) {
        this.options.logger?.warn('postgres listener could not reconnect yet', {
          channel: this.options.channel,
          attempt: this.attempt,
          error: (error as Error).message,
        });
        if (!this.closed) this.scheduleReconnect();
        return;
      }
      if (this.closed) return;
      this.options.logger?.info('postgres listener reconnected', {
        channel: this.options.channel,
        attempts: this.attempt,
      });
      this.attempt = 0;
      this.gap('reconnected');
    }, delay);
  }

  private ping(): void {
    const client = this.client;
    if (!client) return;
    client.query('SELECT 1').catch((error: Error) => this.lost(client, error));
  }

  private async receive(payload: string): Promise<void> {
    let message = payload;
    if (payload.startsWith(OVERFLOW_MARKER)) {
      const id = payload.slice(OVERFLOW_MARKER.length);
      let row: { payload: string } | undefined;
      try {
        const result = await this.options.pool.query<{ payload: string }>(
          'SELECT payload FROM push_overflow WHERE id = $1',
          [id],
        );
        row = result.rows[0];
      } catch (error) {
        this.options.logger?.warn('postgres listener could not read an oversized message', {
          channel: this.options.channel,
          error: (error as Error).message,
        });
      }
      if (row === undefined) {
        this.gap('overflow_missing');
        return;
      }
      message = row.payload;
    }
    try {
      this.options.onMessage(message);
    } catch (error) {
      this.options.logger?.error('postgres listener: a message handler threw', {
        channel: this.options.channel,
        error: (error as Error).message,
      });
    }
  }

  private gap(reason: GapReason): void {
    try {
      this.options.onGap?.(reason);
    } catch (error) {
      this.options.logger?.error('postgres listener: the gap handler threw', {
        error: (error as Error).message,
      });
    }
  }
}

/**
 * The one statement that notifies `channel` of `payload`: `pg_notify` when it fits, else an insert into
 * `push_overflow` (deleting rows past their minute) whose id the notification carries, in the same statement.
 *
 * @example
 * const { text, values } = notificationStatement('servicepay_session_updates', json, Date.now());
 * await transactionClient.query(text, values);
 */
export function notificationStatement(
  channel: string,
  payload: string,
  now: number,
): { text: string; values: unknown[] } {
  if (Buffer.byteLength(payload, 'utf8') <= MAX_NOTIFY_BYTES && !payload.startsWith('#')) {
    return { text: 'SELECT pg_notify($1, $2)', values: [channel, payload] };
  }
  return {
    text: `WITH stale AS (DELETE FROM push_overflow WHERE created_at < $4),
                stored AS (INSERT INTO push_overflow (payload, created_at) VALUES ($2, $3) RETURNING id)
           SELECT pg_notify($1, '${OVERFLOW_MARKER}' || id) FROM stored`,
    values: [channel, payload, now, now - OVERFLOW_KEEP_MS],
  };
}

async function endQuietly(client: pg.Client): Promise<void> {
  // After end() a late socket error must not become an unhandled 'error' event.
  client.removeAllListeners('error');
  client.on('error', () => {});
  await client.end().catch(() => {});
}
