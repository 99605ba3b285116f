import { BoundedMap } from '../../internal/bounded-map.ts';
import type { LimitDecision, RateLimiter } from '../../internal/sliding-window-limiter.ts';
import type { Queryable } from './postgres-runner.ts';

/** How many keys' last decisions a limiter keeps for `peek` (then it forgets them all and starts again). */
const KNOWN_KEYS_MAX = 10_000;

export interface PostgresRateLimiterOptions {
  /** Keeps this limiter's keys apart from other limiters' in the shared table: `api`, `checkout`, `auth`. */
  name: string;
  /** Hits allowed per window for each key: a whole number from 1 to 2^31 − 1 (a PostgreSQL `integer`). */
  limit: number;
  /** The window, in whole seconds' worth of milliseconds (60_000 for the service's per-minute limits). */
  windowMs: number;
}

/**
 * `$5` hits of one key at one second, in one statement: `rate_limit_hit_many` (migration 018) is one
 * `INSERT … ON CONFLICT DO UPDATE` under the key's row lock that allows the first min(`$5`, room left) and
 * refuses the rest, exactly as that many calls of step 009's `rate_limit_hit` one after another would, with
 * the row written once. A PL/pgSQL function rather than a statement sent by the service: its plan is made once
 * per connection and kept, through a pooler in transaction mode too (see migration 009).
 */
const HIT_MANY = `
SELECT allowed, in_window, oldest,
       (SELECT version FROM credentials_version WHERE only_row = 1) AS credentials_version
  FROM rate_limit_hit_many($1, $2, $3, $4, $5)`;

/** The most hits one statement counts. */
const MAX_BATCH = 64;

/**
 * How many of the statement's hits were allowed (the first ones), the window's count after them, its oldest
 * second, and the credentials version as of the statement (migration 020; bigints arrive as text).
 */
type HitRow = { allowed: number; in_window: number; oldest: string; credentials_version: string };
type Waiter = { resolve: (decision: LimitDecision) => void; reject: (error: unknown) => void };

/** What `hit` would decide, read without a lock: $1 the key, $2 the oldest second still in the window. */
const PEEK = `
SELECT (SELECT coalesce(sum(c), 0)::int FROM unnest(seconds, counts) AS k(s, c) WHERE s >= $2::bigint) AS in_window,
       (SELECT min(s) FROM unnest(seconds) AS s WHERE s >= $2::bigint) AS oldest
  FROM rate_limit_buckets WHERE key = $1`;

/**
 * The rolling-window rate limit counted in PostgreSQL, so that every instance of the service spends one
 * budget: the same `LimitDecision` as `SlidingWindowLimiter` (allowed, limit, remaining, resetSeconds), but
 * asynchronous, since it is one round trip to the database per hit, and counted per second so that a hit costs
 * the same whatever the limit: a key's row holds at most `windowMs / 1000` (second, count) pairs (60 for a
 * minute; more only by the seconds of an instance whose clock runs ahead), where the exact limiter kept every
 * allowed hit's time (measured one hit at a time: 2.2–2.5 ms with 3,000 in the row, 0.16–0.23 ms now).
 *
 * **The decision, exactly:** `hit(key, now)` decides as `SlidingWindowLimiter.hit(key, floor(now / 1000) ×
 * 1000)` would with the same hits before it: the exact rolling window read on a clock that ticks whole
 * seconds. A hit is allowed when fewer than `limit` hits were allowed in the last `windowMs / 1000` whole
 * seconds, `now`'s own second included. Against the exact limiter on the millisecond clock:
 * - A hit made at `t` counts until `floor(t / 1000) × 1000 + windowMs`, the start of the second `windowMs`
 *   after its own: `t mod 1000` ms (0 to 999) less than the exact `t + windowMs`, never longer.
 * - Never stricter: every hit counted here is counted there too, so a hit the exact limiter would allow (given
 *   the same hits allowed before it) is allowed here. A client that keeps to `limit` per rolling `windowMs` is
 *   never refused.
 * - At most `limit` extra, and only at the window's trailing edge: a hit the exact limiter would refuse is
 *   allowed here only because some of the hits the exact window holds were made in second
 *   `floor(now / 1000) − windowMs / 1000`, which has just left this window, after `now − windowMs` (so still
 *   inside the exact one); it gets at most as many extra places as there are such hits. Any
 *   `windowMs / 1000` consecutive whole seconds hold at most `limit` allowed hits; a `windowMs` span that does
 *   not start on a whole second may hold those of one more second's tail as well. Worst case, `limit` hits at
 *   12:00:00.999 and `limit` more at 12:01:00.000: 2 × `limit` within 59,001 ms, after which the key waits
 *   until 12:02:00.000.
 *
 * **The headers' numbers:** `remaining` is `limit` minus the hits counted in the window (this one included when
 * allowed), 0 when refused. `resetSeconds` is when the oldest counted second leaves the window, a whole
 * number: `oldestSecond + windowMs / 1000 − floor(now / 1000)` (at least 1; a full window when nothing is
 * counted). It is never early: `now + resetSeconds` s is when that second leaves or at most 999 ms after, so a
 * client that was refused and waits `Retry-After` finds a place (unless others spent it first).
 *
 * **Across instances:** exact under concurrency (the upsert's row lock; see migrations 009's
 * `rate_limit_hit` and 018's `rate_limit_hit_many`). `now` is the caller's clock, as with the in-process limiter; instances are expected to
 * keep their clocks in step (NTP), and a skew of s seconds moves the window's edge by s seconds for the hits
 * that instance makes. The table is UNLOGGED
 * (see migration 009). `prune` deletes the rows of keys with no hit left in the window.
 *
 * @example
 * const api = new PostgresRateLimiter(pool, { name: 'api', limit: 150, windowMs: 60_000 });
 * const decision = await api.hit(`${businessId}:${environment}`, clock.now());
 * if (!decision.allowed) res.setHeader('Retry-After', String(decision.resetSeconds));
 */
export class PostgresRateLimiter implements RateLimiter {
  readonly limit: number;
  /** The window in whole seconds. */
  private readonly windowSeconds: number;
  private readonly prefix: string;
  /** The last decision `hit` made for a key, and the second it was made in (see `peek`). */
  private readonly known = new BoundedMap<string, { decision: LimitDecision; second: number }>(
    KNOWN_KEYS_MAX,
  );

  /** Hits waiting for the statement of their key and second that is out now (see `hit`). */
  private readonly waiting = new Map<string, Waiter[]>();
  /** The keys and seconds with a statement out. */
  private readonly sending = new Set<string>();

  constructor(
    private readonly db: Queryable,
    options: PostgresRateLimiterOptions,
  ) {
    if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > 2_147_483_647)
      throw new Error('limit must be a whole number from 1 to 2147483647');
    if (!Number.isInteger(options.windowMs) || options.windowMs < 1000 || options.windowMs % 1000 !== 0)
      throw new Error('windowMs must be a whole number of seconds (a multiple of 1000, at least 1000)');
    if (!/^[a-z][a-z0-9_-]*$/.test(options.name)) throw new Error(`not a limiter name: ${options.name}`);
    this.limit = options.limit;
    this.windowSeconds = options.windowMs / 1000;
    this.prefix = `${options.name}:`;
  }

  /**
   * Counts one hit of `key` at `now` (epoch ms) and says whether it is allowed. Rejects when the database does.
   *
   * While a statement for a key and second is out, this instance's further hits of it wait and go together in
   * the next one (`HIT_MANY`): counted under the row's lock as that many hits one after another, so the count
   * stays exact across instances, but one round trip, one lock hand-over and one row write for the lot
   * instead of one each. *Why:* every create of a business hits one row, and 50 connections queued on its lock
   * were most of PostgreSQL's statement time per create (issue 38). A hit with none out goes at once, as before.
   *
   * Each decision carries `credentialsVersion`, read in the same statement: a request authenticated from a key
   * remembered in memory is confirmed by it without a round trip of its own (`PostgresApiKeyRepository`).
   */
  hit(key: string, now: number): Promise<LimitDecision> {
    const second = Math.floor(now / 1000);
    const batchKey = `${second}\n${key}`;
    return new Promise<LimitDecision>((resolve, reject) => {
      let waiting = this.waiting.get(batchKey);
      if (!waiting) {
        waiting = [];
        this.waiting.set(batchKey, waiting);
      }
      waiting.push({ resolve, reject });
      if (!this.sending.has(batchKey)) void this.send(batchKey, key, second);
    });
  }

  /** Sends the waiting hits of `key` in `second`, batch after batch, until none waits. */
  private async send(batchKey: string, key: string, second: number): Promise<void> {
    this.sending.add(batchKey);
    try {
      for (let waiting = this.waiting.get(batchKey); waiting; waiting = this.waiting.get(batchKey)) {
        const batch = waiting.splice(0, MAX_BATCH);
        if (waiting.length === 0) this.waiting.delete(batchKey);
        try {
          const result = (await this.db.query(HIT_MANY, [
            this.prefix + key,
            second,
            second - this.windowSeconds + 1,
            this.limit,
            batch.length,
          ])) as { rows: HitRow[] };
          const row = result.rows[0];
          if (!row) throw new Error('the rate limit statement returned no row');
          // The hits in arrival order, as if each had been its own call: the first `row.allowed` fit, each
          // counting one more in the window than the one before it; the rest find the window full.
          const before = row.in_window - row.allowed;
          const oldest = Number(row.oldest);
          const credentialsVersion = Number(row.credentials_version);
          let decision: LimitDecision | undefined;
          batch.forEach((waiter, index) => {
            const allowed = index < row.allowed;
            decision = this.decision(allowed, allowed ? before + index + 1 : row.in_window, oldest, second);
            waiter.resolve({ ...decision, credentialsVersion });
          });
          // The last decision: it counts all of them.
          if (decision) this.known.set(key, { decision, second });
        } catch (error) {
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      this.sending.delete(batchKey);
    }
  }

  /**
   * What `hit` would decide now, without counting a hit (`SlidingWindowLimiter.peek`). A refusal this limiter's
   * own `hit` made stands until its `resetSeconds` and is answered without a round trip: no hit, on any
   * instance, brings a place back sooner (only the oldest second leaving the window does), so the answer is
   * the one the database would give. Otherwise one read, no lock. A key never hit (or pruned) reads as a full
   * budget and keeps no row. *Why:* a client over its budget keeps sending, and each of its 429s peeks.
   */
  async peek(key: string, now: number): Promise<LimitDecision> {
    const second = Math.floor(now / 1000);
    const refused = this.knownRefusal(key, second);
    if (refused) return refused;
    const result = (await this.db.query(PEEK, [this.prefix + key, second - this.windowSeconds + 1])) as {
      rows: Array<{ in_window: number; oldest: string | null }>;
    };
    const row = result.rows[0];
    // As SlidingWindowLimiter answers for a key it keeps no log of.
    if (!row) return { allowed: true, limit: this.limit, remaining: this.limit, resetSeconds: 1 };
    const oldest = row.oldest === null ? second : Number(row.oldest);
    return this.decision(row.in_window < this.limit, row.in_window, oldest, second);
  }

  /**
   * What this instance can tell without a round trip (`RateLimiter.peekKnown`): a refusal its `hit` made, until
   * its reset (as `peek`); an allowance its `hit` made in this same second with places left. The allowance may
   * be stale by other instances' hits in that second: the request it lets on is counted by its own `hit`, which
   * refuses it if the budget is spent (and from then on this instance knows). Undefined otherwise.
   */
  peekKnown(key: string, now: number): LimitDecision | undefined {
    const second = Math.floor(now / 1000);
    const refused = this.knownRefusal(key, second);
    if (refused) return refused;
    const known = this.known.get(key);
    if (known?.decision.allowed && known.second === second && known.decision.remaining > 0)
      return known.decision;
    return undefined;
  }

  /** A refusal `hit` made for `key` that still stands at `second`, its reset counted from there. */
  private knownRefusal(key: string, second: number): LimitDecision | undefined {
    const known = this.known.get(key);
    if (!known || known.decision.allowed) return undefined;
    const resetAt = known.second + known.decision.resetSeconds;
    if (second < known.second || second >= resetAt) return undefined;
    return { ...known.decision, resetSeconds: resetAt - second };
  }

  /** Deletes this limiter's keys whose newest second has left the window; returns how many. */
  async prune(now: number): Promise<number> {
    const result = (await this.db.query(
      `DELETE FROM rate_limit_buckets
        WHERE starts_with(key, $1) AND coalesce(seconds[cardinality(seconds)], 0) < $2::bigint`,
      [this.prefix, Math.floor(now / 1000) - this.windowSeconds + 1],
    )) as { rowCount: number | null };
    return result.rowCount ?? 0;
  }

  /** `inWindow` counts this hit when it was allowed; `oldest` is the oldest second counted. */
  private decision(allowed: boolean, inWindow: number, oldest: number, second: number): LimitDecision {
    return {
      allowed,
      limit: this.limit,
      remaining: allowed ? Math.max(0, this.limit - inWindow) : 0,
      resetSeconds: Math.max(1, oldest + this.windowSeconds - second),
    };
  }
}
