export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /**
   * Seconds until the quota comes back: until the oldest hit in the window leaves it (at least 1). While some
   * requests are left this says when one more returns; when none are, it is also the `Retry-After`.
   */
  resetSeconds: number;
  /**
   * Where the hit was counted in PostgreSQL: the credentials version (migration 020) as of the statement that
   * counted it, which confirms a key remembered in memory (`ApiKeyRepository.recall`). Absent in memory.
   */
  credentialsVersion?: number;
}

/**
 * A rate limit as the middleware uses it: counted in this process (`SlidingWindowLimiter`, synchronous) or in
 * PostgreSQL across every instance (`PostgresRateLimiter`, one round trip per hit); the callers await both.
 */
export interface RateLimiter {
  readonly limit: number;
  /** Counts one hit of `key` at `now` and says whether it is allowed. */
  hit(key: string, now: number): LimitDecision | Promise<LimitDecision>;
  /** What a hit would decide, counting nothing. */
  peek(key: string, now: number): LimitDecision | Promise<LimitDecision>;
  /**
   * A limiter that has to ask a database may know enough without asking: what it can tell from its own last
   * decision for the key, or undefined when it would have to ask (`peek`). For the refusal before express,
   * which a request's own `hit` confirms. Absent where `peek` asks nobody.
   */
  peekKnown?(key: string, now: number): LimitDecision | undefined;
  /** Forgets keys with no hit left in the window. */
  prune(now: number): unknown;
}

type HitLog = { times: number[]; head: number };

/**
 * An exact rolling-window limit: at most `limit` hits per `windowMs` for each key. Each key keeps the times of
 * its hits inside the window (never more than `limit`), oldest first; amortised O(1) per hit.
 */
export class SlidingWindowLimiter implements RateLimiter {
  private readonly logs = new Map<string, HitLog>();

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
  ) {}

  hit(key: string, now: number): LimitDecision {
    return this.decide(key, now, true);
  }

  /**
   * What `hit` would decide now, without counting a hit: lets a request over its budget be refused before its
   * body is read (`refuseOverBudget`), while `hit` still counts it once, where it is authenticated.
   *
   * @example
   * if (!limiter.peek(`${businessId}:test`, clock.now()).allowed) refuse();
   */
  peek(key: string, now: number): LimitDecision {
    return this.decide(key, now, false);
  }

  private decide(key: string, now: number, count: boolean): LimitDecision {
    let log = this.logs.get(key);
    if (!log) {
      // A peek at a key never hit keeps no state for it: memory follows clients that spend, not lookers.
      if (!count) return { allowed: true, limit: this.limit, remaining: this.limit, resetSeconds: 1 };
      log = { times: [], head: 0 };
      this.logs.set(key, log);
    }
    const { times } = log;
    while (log.head < times.length && now - (times[log.head] ?? 0) >= this.windowMs) log.head++;
    if (log.head > 1024 && log.head * 2 > times.length) {
      log.times = times.slice(log.head);
      log.head = 0;
    }
    const inWindow = log.times.length - log.head;
    if (inWindow >= this.limit) {
      const oldest = log.times[log.head] ?? now;
      return {
        allowed: false,
        limit: this.limit,
        remaining: 0,
        resetSeconds: Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000)),
      };
    }
    if (!count) {
      const oldest = log.times[log.head] ?? now;
      return {
        allowed: true,
        limit: this.limit,
        remaining: this.limit - inWindow,
        resetSeconds: Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000)),
      };
    }
    log.times.push(now);
    const remaining = this.limit - inWindow - 1;
    const oldest = log.times[log.head] ?? now;
    return {
      allowed: true,
      limit: this.limit,
      remaining,
      resetSeconds: Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000)),
    };
  }

  /** Forgets keys with no hit inside the window, so memory follows active clients only. */
  prune(now: number): void {
    for (const [key, log] of this.logs) {
      const newest = log.times[log.times.length - 1];
      if (newest === undefined || now - newest >= this.windowMs) this.logs.delete(key);
    }
  }
}
