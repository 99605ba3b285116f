/** How a delivery is retried, how long one attempt may take, and when a failing endpoint is turned off. */
export interface RetrySchedule {
  /** Delay before retry n (n = 1…); a delivery makes `delaysMs.length + 1` attempts in all. */
  delaysMs: readonly number[];
  /** Each delay is multiplied by a random factor in [1 - jitter, 1 + jitter], so retries do not stampede. */
  jitter: number;
  /** One attempt, connection to last byte. */
  timeoutMs: number;
  /** An endpoint is disabled after this many failed attempts in a row spanning at least `disablePeriodMs`. */
  disableAfterAttempts: number;
  disablePeriodMs: number;
  /**
   * When nothing is due, how long the worker waits before it looks again (default 5 s). Its own commits wake
   * it at once; this bounds the wait for deliveries it was not told about: another instance's (PostgreSQL) that
   * died before sending them, a moved clock.
   */
  recheckMs?: number;
  /**
   * How long a delivery one instance picked is kept from the others on PostgreSQL (default 60 s): longer than
   * an attempt (`timeoutMs`) and its recording (the worker refuses a schedule whose lease is not longer than
   * its timeout), and how long a killed instance's picks wait to be sent again. An attempt that outlives it
   * anyway (a stalled process) may find the delivery claimed again by another instance: its failure is then
   * not recorded on the delivery, its success is.
   */
  leaseMs?: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * `standard`: 12 attempts over about three days (1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 12 h, 16 h,
 * 16 h ≈ 71.6 h, ±20 %). `fast`: the same shape in seconds (about a minute in all), for development and tests.
 */
export const RETRY_SCHEDULES: Record<'standard' | 'fast', RetrySchedule> = {
  standard: {
    delaysMs: [
      MINUTE,
      5 * MINUTE,
      30 * MINUTE,
      HOUR,
      2 * HOUR,
      4 * HOUR,
      8 * HOUR,
      12 * HOUR,
      12 * HOUR,
      16 * HOUR,
      16 * HOUR,
    ],
    jitter: 0.2,
    timeoutMs: 10_000,
    disableAfterAttempts: 12,
    disablePeriodMs: 48 * HOUR,
    recheckMs: 5_000,
    leaseMs: MINUTE,
  },
  fast: {
    delaysMs: [250, 500, 1000, 2000, 4000, 8000, 15_000, 30_000],
    jitter: 0.2,
    timeoutMs: 1000,
    disableAfterAttempts: 9,
    disablePeriodMs: 5000,
    recheckMs: 500,
    leaseMs: 5000,
  },
};

/** How long a delivery is retried on `schedule` before it fails for good: its delays added up (jitter aside). */
export function retrySpanMs(schedule: RetrySchedule): number {
  return schedule.delaysMs.reduce((total, delay) => total + delay, 0);
}

/** `delay` scaled by a random factor in [1 - jitter, 1 + jitter]. */
export function jittered(delay: number, jitter: number, random: () => number = Math.random): number {
  return Math.round(delay * (1 - jitter + 2 * jitter * random()));
}
