import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRateLimiter } from '../../reference-server/src/db/postgres/postgres-rate-limiter.ts';
import {
  type LimitDecision,
  SlidingWindowLimiter,
} from '../../reference-server/src/internal/sliding-window-limiter.ts';
import { eventually } from '../support/child-process.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 13: "the 150-per-minute limit counted across instances". Two limiters on two pools stand for two
// instances of the service. The limiter counts per second (its TSDoc says exactly how): it decides as the
// in-process SlidingWindowLimiter would on a clock that reads whole seconds, which these tests check against,
// and it never refuses a hit the exact limiter allows.

reportIfPostgresMissing();

const WINDOW = 60_000;
/** A whole second: `T0 + 999` is still in T0's second, `T0 + 1_000` is the next one. */
const T0 = Date.parse('2026-11-23T12:00:00.000Z');
const onWholeSeconds = (now: number) => Math.floor(now / 1000) * 1000;

/**
 * A hit's decision as the in-process limiter would make it: every hit's also says which credentials version
 * (migration 020) its statement read, checked here to be there and then left out of the comparison.
 */
function decided(decision: LimitDecision): LimitDecision {
  const { credentialsVersion, ...rest } = decision;
  expect(credentialsVersion).toEqual(expect.any(Number));
  return rest;
}

/** A fixed pseudo-random sequence in [0, 1). */
function randomWalk(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe.runIf(postgresAvailable)(
  'PostgresRateLimiter: one budget across instances on a real PostgreSQL',
  () => {
    const scratch = useScratchDatabase({ pools: { poolA: { max: 8 }, poolB: { max: 8 } } });

    beforeAll(async () => {
      await migratePostgres(scratch.poolA);
    });

    /** Two instances' limiters of one name. */
    const instances = (name: string, limit: number, windowMs = WINDOW) =>
      [scratch.poolA, scratch.poolB].map(
        (pool) => new PostgresRateLimiter(pool, { name, limit, windowMs }),
      ) as [PostgresRateLimiter, PostgresRateLimiter];

    const row = async (key: string) =>
      (
        await scratch.poolA.query<{ seconds: string[]; counts: number[] }>(
          'SELECT seconds, counts FROM rate_limit_buckets WHERE key = $1',
          [key],
        )
      ).rows[0];

    it('150 concurrent hits spread over two instances are all allowed, each seeing its own count; the 151st is refused', async () => {
      const [a, b] = instances('api', 150);
      const key = 'biz_concurrent:test';
      const decisions = await Promise.all(
        Array.from({ length: 150 }, (_, i) => (i % 2 === 0 ? a : b).hit(key, T0 + i)),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(150);
      // Counted one after another: the remaining counts are 149 … 0, each exactly once.
      expect(decisions.map((decision) => decision.remaining).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 150 }, (_, i) => i),
      );
      // One second's worth of hits is one pair in the row.
      expect(await row('api:biz_concurrent:test')).toEqual({ seconds: [String(T0 / 1000)], counts: [150] });

      const refused = decided(await b.hit(key, T0 + 1_000));
      // The hits of T0's second leave the window at T0 + 60 s: 59 s after this one.
      expect(refused).toEqual({ allowed: false, limit: 150, remaining: 0, resetSeconds: 59 });
      expect(decided(await a.hit(key, T0 + 30_500))).toEqual({
        allowed: false,
        limit: 150,
        remaining: 0,
        resetSeconds: 30,
      });
      expect(decided(await a.hit(key, T0 + 59_999))).toEqual({
        allowed: false,
        limit: 150,
        remaining: 0,
        resetSeconds: 1,
      });
      // Refused hits counted nothing.
      expect(await row('api:biz_concurrent:test')).toEqual({ seconds: [String(T0 / 1000)], counts: [150] });
    });

    it("an instance's concurrent hits of one key go together in few statements, still counted one by one (issue 38)", async () => {
      // Each instance's statements counted on its real pool: the hits that wait for one key's statement go in
      // the next one together, and the decisions are the same as one statement per hit would give.
      const sent = { a: 0, b: 0 };
      const counting = (pool: pg.Pool, name: 'a' | 'b') => ({
        query: (text: string, values?: unknown[]) => {
          sent[name]++;
          return pool.query(text, values);
        },
      });
      const a = new PostgresRateLimiter(counting(scratch.poolA, 'a'), {
        name: 'api',
        limit: 150,
        windowMs: WINDOW,
      });
      const b = new PostgresRateLimiter(counting(scratch.poolB, 'b'), {
        name: 'api',
        limit: 150,
        windowMs: WINDOW,
      });
      const decisions = await Promise.all(
        Array.from({ length: 240 }, (_, i) => (i % 2 === 0 ? a : b).hit('biz_batched:test', T0 + (i % 1000))),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(150);
      expect(
        decisions
          .filter((decision) => decision.allowed)
          .map((decision) => decision.remaining)
          .sort((x, y) => x - y),
      ).toEqual(Array.from({ length: 150 }, (_, i) => i));
      for (const decision of decisions.filter((each) => !each.allowed)) expect(decision.remaining).toBe(0);
      // Within an instance the hits are counted in the order they came: the allowed ones are its first ones,
      // each with one place fewer left than the one before.
      for (const parity of [0, 1]) {
        const own = decisions.filter((_, i) => i % 2 === parity);
        const allowed = own.filter((decision) => decision.allowed).length;
        expect(own.slice(0, allowed).every((decision) => decision.allowed)).toBe(true);
        own.slice(1, allowed).forEach((decision, i) => {
          expect(decision.remaining).toBeLessThan(own[i]?.remaining ?? -1);
        });
      }
      expect(await row('api:biz_batched:test')).toEqual({ seconds: [String(T0 / 1000)], counts: [150] });
      // 120 hits each: the first goes alone, the rest wait and go in batches of at most 64.
      expect(sent.a).toBeGreaterThanOrEqual(3);
      expect(sent.a).toBeLessThan(10);
      expect(sent.b).toBeGreaterThanOrEqual(3);
      expect(sent.b).toBeLessThan(10);
    });

    it('over the limit under concurrency: 400 hits at once over two instances allow exactly 150', async () => {
      const [a, b] = instances('api', 150);
      // Spread over two seconds, so that the count is a sum over pairs, not one counter.
      const decisions = await Promise.all(
        Array.from({ length: 400 }, (_, i) =>
          (i % 2 === 0 ? a : b).hit('biz_burst:live', T0 + (i % 3 === 0 ? 400 : 1_600)),
        ),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(150);
      for (const decision of decisions.filter((each) => !each.allowed)) {
        expect(decision.remaining).toBe(0);
        expect(decision.limit).toBe(150);
      }
      const counted = await row('api:biz_burst:live');
      expect(counted?.counts.reduce((sum, count) => sum + count, 0)).toBe(150);
    });

    it('decides exactly as SlidingWindowLimiter on a whole-second clock, over a long mixed sequence of hits and peeks', async () => {
      const inProcess = new SlidingWindowLimiter(5, 10_000);
      const [a, b] = instances('compare', 5, 10_000);
      const next = randomWalk(42);
      let now = T0 + 123;
      const expected: LimitDecision[] = [];
      const actual: LimitDecision[] = [];
      for (let i = 0; i < 600; i++) {
        // Steps of 0 to 1.5 s (several calls in one millisecond, and in one second, included).
        now += next() < 0.2 ? 0 : Math.floor(next() * 1_500);
        // Four keys, the last of them only ever peeked at; about a quarter of the calls are peeks.
        const key = `k${Math.floor(next() * 4)}`;
        const limiter = i % 2 === 0 ? a : b;
        if (key === 'k3' || next() < 0.25) {
          expected.push(inProcess.peek(key, onWholeSeconds(now)));
          actual.push(await limiter.peek(key, now));
        } else {
          expected.push(inProcess.hit(key, onWholeSeconds(now)));
          actual.push(decided(await limiter.hit(key, now)));
        }
      }
      expect(actual).toEqual(expected);
      expect(expected.filter((decision) => !decision.allowed).length).toBeGreaterThan(30);
      expect(expected.filter((decision) => decision.allowed).length).toBeGreaterThan(150);
      // A peek counts nothing: the key only ever peeked at has no row.
      const peeked = await scratch.poolA.query("SELECT 1 FROM rate_limit_buckets WHERE key = 'compare:k3'");
      expect(peeked.rowCount).toBe(0);
    });

    it('never refuses a hit the exact millisecond limiter allows: a client keeping to the limit is always let in', async () => {
      const exact = new SlidingWindowLimiter(5, 10_000);
      const [a, b] = instances('keeps-to-it', 5, 10_000);
      const next = randomWalk(7);
      let now = T0 + 1;
      let sent = 0;
      for (let i = 0; i < 2_000 && sent < 300; i++) {
        now += Math.floor(next() * 700);
        // The client sends only what the exact rolling window allows.
        if (!exact.peek('client', now).allowed) continue;
        const reference = exact.hit('client', now);
        const decision = await (sent % 2 === 0 ? a : b).hit('client', now);
        sent++;
        expect(decision.allowed).toBe(true);
        // Counting no more hits than the exact window, it never says fewer remain.
        expect(decision.remaining).toBeGreaterThanOrEqual(reference.remaining);
      }
      expect(sent).toBe(300);
    });

    it('at the window edge a second leaves whole: allowed here, refused by the exact limiter, bounded by that second', async () => {
      const [a, b] = instances('edge', 3, WINDOW);
      const exact = new SlidingWindowLimiter(3, WINDOW);
      // Three hits inside one second: at .100, .500 and .900.
      for (const at of [100, 500, 900]) {
        expect((await a.hit('k', T0 + at)).allowed).toBe(true);
        exact.hit('k', T0 + at);
      }
      expect(decided(await b.hit('k', T0 + 59_999))).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 1,
      });
      // T0 + 60 s: the exact window still holds all three (they leave it at 60.100, 60.500 and 60.900 s), so it
      // refuses; here their whole second has left, so the three places are back, and only three.
      expect(exact.peek('k', T0 + WINDOW).allowed).toBe(false);
      const back = await Promise.all([1, 2, 3, 4].map((i) => (i % 2 === 0 ? a : b).hit('k', T0 + WINDOW)));
      expect(back.filter((decision) => decision.allowed)).toHaveLength(3);
      // The worst case the TSDoc names: 3 at 12:00:00.100–.900 and 3 at 12:01:00.000, then nothing until
      // 12:02:00.000, when the second of 12:01:00 leaves.
      expect(decided(await a.hit('k', T0 + 119_999))).toMatchObject({ allowed: false, resetSeconds: 1 });
      expect(decided(await b.hit('k', T0 + 2 * WINDOW))).toEqual({
        allowed: true,
        limit: 3,
        remaining: 2,
        resetSeconds: 60,
      });
    });

    it('the window slides second by second, and the headers say what is left and when a place comes back', async () => {
      const [a, b] = instances('slide', 3, WINDOW);
      // The first hit at 12:00:00.250: counted until 12:01:00.000; RateLimit-Reset counts from now's second.
      expect(decided(await a.hit('k', T0 + 250))).toEqual({
        allowed: true,
        limit: 3,
        remaining: 2,
        resetSeconds: 60,
      });
      expect(await b.peek('k', T0 + 10_700)).toEqual({
        allowed: true,
        limit: 3,
        remaining: 2,
        resetSeconds: 50,
      });
      expect(decided(await b.hit('k', T0 + 10_700))).toEqual({
        allowed: true,
        limit: 3,
        remaining: 1,
        resetSeconds: 50,
      });
      expect(decided(await a.hit('k', T0 + 30_000))).toEqual({
        allowed: true,
        limit: 3,
        remaining: 0,
        resetSeconds: 30,
      });
      // Refused: Retry-After is when the oldest second (12:00:00) leaves.
      expect(decided(await b.hit('k', T0 + 45_999))).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 15,
      });
      expect(await a.peek('k', T0 + 59_000)).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 1,
      });
      // 12:01:00.000: the first hit has left, the one of 12:00:10 is now the oldest (leaves at 12:01:10).
      expect(decided(await b.hit('k', T0 + WINDOW))).toEqual({
        allowed: true,
        limit: 3,
        remaining: 0,
        resetSeconds: 10,
      });
      expect(decided(await a.hit('k', T0 + WINDOW + 500))).toMatchObject({
        allowed: false,
        resetSeconds: 10,
      });
      // Waiting Retry-After seconds from the refusal finds a place.
      expect(decided(await a.hit('k', T0 + WINDOW + 500 + 10_000))).toMatchObject({
        allowed: true,
        remaining: 0,
      });
      // A key with nothing left in its window peeks as a full budget; one never hit keeps no row.
      expect(await a.peek('k', T0 + 10 * WINDOW + 400)).toEqual({
        allowed: true,
        limit: 3,
        remaining: 3,
        resetSeconds: 60,
      });
      expect(await a.peek('never-hit', T0)).toEqual({
        allowed: true,
        limit: 3,
        remaining: 3,
        resetSeconds: 1,
      });
    });

    it('a key holds at most windowMs / 1000 pairs whatever the limit: three minutes of hits, two a second', async () => {
      const [a, b] = instances('unreachable', 1_000_000_000);
      for (let i = 0; i < 360; i++) {
        const decision = await (i % 2 === 0 ? a : b).hit('biz', T0 + i * 500);
        expect(decision.allowed).toBe(true);
      }
      const counted = await row('unreachable:biz');
      // The last 60 seconds (12:02:00 to 12:02:59), two hits each; the first two minutes are gone.
      expect(counted?.seconds).toEqual(Array.from({ length: 60 }, (_, i) => String(T0 / 1000 + 120 + i)));
      expect(counted?.counts).toEqual(Array.from({ length: 60 }, () => 2));
      expect((await a.peek('biz', T0 + 179_999)).remaining).toBe(1_000_000_000 - 120);
    });

    it('an instance whose clock is behind counts in its own second; the pairs stay sorted and merged', async () => {
      const [ahead, behind] = instances('skew', 10);
      await ahead.hit('k', T0 + 5_100);
      await behind.hit('k', T0 + 3_900);
      await ahead.hit('k', T0 + 5_900);
      await behind.hit('k', T0 + 4_000);
      const s = T0 / 1000;
      expect(await row('skew:k')).toEqual({
        seconds: [String(s + 3), String(s + 4), String(s + 5)],
        counts: [1, 1, 2],
      });
      expect(await behind.peek('k', T0 + 4_000)).toEqual({
        allowed: true,
        limit: 10,
        remaining: 6,
        resetSeconds: 59,
      });
    });

    it('keys and limiters are counted apart; prune drops only keys with no second left in the window', async () => {
      const api = new PostgresRateLimiter(scratch.poolA, { name: 'apart', limit: 1, windowMs: WINDOW });
      const checkout = new PostgresRateLimiter(scratch.poolB, {
        name: 'checkout',
        limit: 1,
        windowMs: WINDOW,
      });
      expect((await api.hit('same-key', T0)).allowed).toBe(true);
      expect((await api.hit('other-key', T0 + 30_999)).allowed).toBe(true);
      expect((await checkout.hit('same-key', T0)).allowed).toBe(true);
      expect((await api.hit('same-key', T0 + 1)).allowed).toBe(false);

      const keys = async () =>
        (
          await scratch.poolA.query(
            "SELECT key FROM rate_limit_buckets WHERE key LIKE 'apart:%' OR key LIKE 'checkout:%' ORDER BY key",
          )
        ).rows.map((each) => each.key);
      expect(await api.prune(T0 + 59_999)).toBe(0); // same-key's second (12:00:00) is still in the window
      expect(await api.prune(T0 + WINDOW)).toBe(1); // now it has left; other-key's (12:00:30) has not
      expect(await keys()).toEqual(['apart:other-key', 'checkout:same-key']);
      expect(await api.prune(T0 + 89_999)).toBe(0);
      expect(await api.prune(T0 + 90_000)).toBe(1); // 12:00:30 has left at 12:01:30.000
      expect(await keys()).toEqual(['checkout:same-key']);
      expect(decided(await api.hit('same-key', T0 + WINDOW))).toEqual({
        allowed: true,
        limit: 1,
        remaining: 0,
        resetSeconds: 60,
      });
    });

    it('every hit says the credentials version as committed when it was counted: a key or business changed since moves it', async () => {
      // What lets authentication trust a key it remembers without reading it (middleware/authenticate.ts): the
      // hit it makes anyway reads the version in the same statement, and any change to api_keys or businesses,
      // made by any connection, moves it by the time it commits, never before.
      const [a, b] = instances('versions', 1_000);
      const first = (await a.hit('biz', T0)).credentialsVersion;
      expect(first).toEqual(expect.any(Number));
      expect((await b.hit('biz', T0 + 1)).credentialsVersion).toBe(first);

      const other = await scratch.poolB.connect();
      try {
        await other.query('BEGIN');
        await other.query(
          "INSERT INTO businesses (id, name, kyc_status, created_at) VALUES ('biz_versions', 'V', 'pending', 1)",
        );
        // Not committed yet: the hits on either instance still read the old version.
        expect((await a.hit('biz', T0 + 2)).credentialsVersion).toBe(first);
        await other.query('COMMIT');
      } finally {
        other.release();
      }
      const afterInsert = (await a.hit('biz', T0 + 3)).credentialsVersion;
      expect(afterInsert).toBeGreaterThan(first ?? Number.POSITIVE_INFINITY);

      await scratch.poolA.query("UPDATE businesses SET kyc_status = 'approved' WHERE id = 'biz_versions'");
      const afterApproval = (await b.hit('biz', T0 + 4)).credentialsVersion;
      expect(afterApproval).toBeGreaterThan(afterInsert ?? Number.POSITIVE_INFINITY);

      await scratch.poolA.query(
        `INSERT INTO api_keys (id, business_id, environment, kind, key_hash, prefix, last4, created_at)
         VALUES ('key_versions', 'biz_versions', 'test', 'secret', '\\x00', 'sk_test_', 'abcd', 1)`,
      );
      const afterKey = (await a.hit('biz', T0 + 5)).credentialsVersion;
      expect(afterKey).toBeGreaterThan(afterApproval ?? Number.POSITIVE_INFINITY);
      await scratch.poolB.query("UPDATE api_keys SET revoked_at = 9 WHERE id = 'key_versions'");
      expect((await a.hit('biz', T0 + 6)).credentialsVersion).toBeGreaterThan(
        afterKey ?? Number.POSITIVE_INFINITY,
      );
    });

    it('while the database is down a hit rejects; a clean restart keeps the counts, a crash forgets them', async () => {
      const [a, b] = instances('outage', 3);
      for (let i = 0; i < 3; i++) expect((await a.hit('biz', T0 + i)).allowed).toBe(true);

      const restarting = scratch.postgres.restart({ downMs: 1_000 });
      await eventually(() =>
        scratch.poolB.query('SELECT 1').then(
          () => undefined,
          () => true,
        ),
      );
      // The caller turns this rejection into 503 in the envelope; nothing is counted or allowed by guess.
      await expect(b.hit('biz', T0 + 10)).rejects.toThrow();
      await restarting;
      // The same pools reconnect by themselves (and prepare the statements again), and the three hits are
      // still in the window.
      expect(decided(await b.hit('biz', T0 + 20))).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 60,
      });

      // UNLOGGED: a crash empties the table (see its migration), which gives the key a fresh window.
      await scratch.postgres.restart({ mode: 'immediate' });
      expect(decided(await a.hit('biz', T0 + 30))).toEqual({
        allowed: true,
        limit: 3,
        remaining: 2,
        resetSeconds: 60,
      });
    });

    it('knows without a round trip what its own hits told it: a refusal until its reset, an allowance for the rest of its second', async () => {
      const [a, b] = instances('known', 2);
      expect(a.peekKnown('k', T0)).toBeUndefined();
      expect(decided(await a.hit('k', T0 + 100))).toMatchObject({ allowed: true, remaining: 1 });
      const asked = vi.spyOn(scratch.poolA, 'query');
      try {
        // Same second: the allowance stands, even though the other instance spends the last place meanwhile
        // (the request's own hit then refuses it, and from then on this instance knows).
        expect(decided(await b.hit('k', T0 + 200))).toMatchObject({ allowed: true, remaining: 0 });
        expect(a.peekKnown('k', T0 + 900)).toMatchObject({ allowed: true, remaining: 1 });
        // The next second: nothing known, ask.
        expect(a.peekKnown('k', T0 + 1_000)).toBeUndefined();
        expect(asked).not.toHaveBeenCalled();
        expect(decided(await a.hit('k', T0 + 1_000))).toMatchObject({ allowed: false, resetSeconds: 59 });
        expect(asked).toHaveBeenCalledTimes(1);
        // Refused: known until the oldest second leaves, by peekKnown and by peek alike, without asking.
        expect(a.peekKnown('k', T0 + 30_000)).toEqual({
          allowed: false,
          limit: 2,
          remaining: 0,
          resetSeconds: 30,
        });
        expect(await a.peek('k', T0 + 59_999)).toEqual({
          allowed: false,
          limit: 2,
          remaining: 0,
          resetSeconds: 1,
        });
        expect(asked).toHaveBeenCalledTimes(1);
        // Once it left, ask again: both places are back.
        expect(a.peekKnown('k', T0 + 60_000)).toBeUndefined();
        expect(await a.peek('k', T0 + 60_000)).toMatchObject({ allowed: true, remaining: 2 });
        expect(asked).toHaveBeenCalledTimes(2);
      } finally {
        asked.mockRestore();
      }
    });

    it('refuses a limiter it could not count: no place, not a PostgreSQL integer, a window of part seconds, a bad name', () => {
      const make = (options: { name?: string; limit?: number; windowMs?: number }) => () =>
        new PostgresRateLimiter(scratch.poolA, { name: 'api', limit: 1, windowMs: WINDOW, ...options });
      expect(make({ limit: 0 })).toThrow(/limit/);
      expect(make({ limit: 2 ** 31 })).toThrow(/limit/);
      expect(make({ limit: 1.5 })).toThrow(/limit/);
      expect(make({ windowMs: 1_500 })).toThrow(/windowMs/);
      expect(make({ windowMs: 500 })).toThrow(/windowMs/);
      expect(make({ name: 'api:x' })).toThrow(/name/);
      expect(make({ limit: 2 ** 31 - 1 })).not.toThrow();
    });
  },
);
