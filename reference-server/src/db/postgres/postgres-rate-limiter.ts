import type { LimitDecision, RateLimiter } from '../../internal/sliding-window-limiter.ts';
import type { Queryable } from './notification-channel.ts';

export interface PostgresRateLimiterOptions {
  /** Keeps this limiter's keys apart from other limiters' in the shared table: `api`, `checkout`, `auth`. */
  name: string;
  /** Hits allowed per window for each key (at least 1). */
  limit: number;
  windowMs: number;
}

/**
 * One hit, in one statement: the key's row is created, or locked and rewritten with the hits still inside the
 * window (`t > now - window`, as `SlidingWindowLimiter` keeps them) plus this one if fewer than `limit`
 * remain. The row lock of `ON CONFLICT DO UPDATE` makes concurrent hits on a key, from any instance, count one
 * after another; so the limit is exact across instances, not approximately so.
 */
const HIT = `
INSERT INTO rate_limit_windows AS w (key, hits, last_allowed) VALUES ($1, ARRAY[$2::bigint], true)
ON CONFLICT (key) DO UPDATE SET
  last_allowed = (SELECT count(*) FROM unnest(w.hits) AS t WHERE t > $2::bigint - $3::bigint) < $4::int,
  hits = ARRAY(
    SELECT t FROM unnest(
      w.hits || CASE
        WHEN (SELECT count(*) FROM unnest(w.hits) AS t WHERE t > $2::bigint - $3::bigint) < $4::int
        THEN ARRAY[$2::bigint] ELSE '{}'::bigint[] END
    ) AS t
    WHERE t > $2::bigint - $3::bigint ORDER BY t
  )
RETURNING last_allowed AS allowed, cardinality(hits) AS in_window, hits[1] AS oldest`;

/**
 * The rolling-window rate limit counted in PostgreSQL, so that every instance of the service spends one
 * budget: the same decisions as `SlidingWindowLimiter` (`LimitDecision`: allowed, limit, remaining,
 * resetSeconds), exact, but asynchronous, since it is one round trip to the database per hit. `now` is the
 * caller's clock, as with the in-process limiter; instances are expected to keep their clocks in step (NTP),
 * and a skew of s ms moves a window's edge by s ms for hits that instance makes.
 *
 * A key's row holds at most `limit` times (150 × 8 bytes for the API limit); the table is UNLOGGED (see its
 * migration). `prune` deletes the rows of keys with no hit left in the window.
 *
 * @example
 * const api = new PostgresRateLimiter(pool, { name: 'api', limit: 150, windowMs: 60_000 });
 * const decision = await api.hit(`${businessId}:${environment}`, clock.now());
 * if (!decision.allowed) res.setHeader('Retry-After', String(decision.resetSeconds));
 */
export class PostgresRateLimiter implements RateLimiter {
  readonly limit: number;
  private readonly windowMs: number;
  private readonly prefix: string;

  constructor(
    private readonly db: Queryable,
    options: PostgresRateLimiterOptions,
  ) {
    if (!Number.isInteger(options.limit) || options.limit < 1)
      throw new Error('limit must be a whole number ≥ 1');
    if (!Number.isInteger(options.windowMs) || options.windowMs < 1) throw new Error('windowMs must be ≥ 1');
    if (!/^[a-z][a-z0-9_-]*$/.test(options.name)) throw new Error(`not a limiter name: ${options.name}`);
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.prefix = `${options.name}:`;
  }

  /** Counts one hit of `key` at `now` (epoch ms) and says whether it is allowed. Rejects when the database does. */
  async hit(key: string, now: number): Promise<LimitDecision> {
    const result = (await this.db.query(HIT, [this.prefix + key, now, this.windowMs, this.limit])) as {
      rows: Array<{ allowed: boolean; in_window: number; oldest: string | null }>;
    };
    const row = result.rows[0];
    if (!row) throw new Error('the rate limit statement returned no row');
    const oldest = row.oldest === null ? now : Number(row.oldest);
    return {
      allowed: row.allowed,
      limit: this.limit,
      remaining: row.allowed ? this.limit - row.in_window : 0,
      resetSeconds: Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000)),
    };
  }

  /**
   * What `hit` would decide now, without counting a hit (`SlidingWindowLimiter.peek`): a read, no lock. A key
   * never hit (or pruned) reads as a full budget and keeps no row.
   */
  async peek(key: string, now: number): Promise<LimitDecision> {
    const result = (await this.db.query(
      `SELECT (SELECT count(*)::int FROM unnest(hits) AS t WHERE t > $2::bigint - $3::bigint) AS in_window,
              (SELECT min(t) FROM unnest(hits) AS t WHERE t > $2::bigint - $3::bigint) AS oldest
         FROM rate_limit_windows WHERE key = $1`,
      [this.prefix + key, now, this.windowMs],
    )) as { rows: Array<{ in_window: number; oldest: string | null }> };
    const row = result.rows[0];
    if (!row) return { allowed: true, limit: this.limit, remaining: this.limit, resetSeconds: 1 };
    const oldest = row.oldest === null ? now : Number(row.oldest);
    const allowed = row.in_window < this.limit;
    return {
      allowed,
      limit: this.limit,
      remaining: allowed ? this.limit - row.in_window : 0,
      resetSeconds: Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000)),
    };
  }

  /** Deletes this limiter's keys whose newest hit has left the window; returns how many. */
  async prune(now: number): Promise<number> {
    const result = (await this.db.query(
      `DELETE FROM rate_limit_windows
        WHERE starts_with(key, $1) AND coalesce(hits[cardinality(hits)], 0) <= $2::bigint - $3::bigint`,
      [this.prefix, now, this.windowMs],
    )) as { rowCount: number | null };
    return result.rowCount ?? 0;
  }
}
