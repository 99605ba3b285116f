import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRateLimiter } from '../../reference-server/src/db/postgres/postgres-rate-limiter.ts';
import {
  type LimitDecision,
  SlidingWindowLimiter,
} from '../../reference-server/src/internal/sliding-window-limiter.ts';
import { eventually } from '../support/child-process.ts';
import {
  postgresAvailable,
  reportIfPostgresMissing,
  type ScratchPostgres,
  startPostgres,
} from '../support/postgres.ts';

// Issue 13: "the 150-per-minute limit counted across instances". Two limiters on two pools stand for two
// instances of the service; the SQLite service's in-process SlidingWindowLimiter is the reference for what
// each decision says.

reportIfPostgresMissing();

const WINDOW = 60_000;
const T0 = Date.parse('2026-11-23T12:00:00.000Z');

describe.runIf(postgresAvailable)(
  'PostgresRateLimiter: one budget across instances on a real PostgreSQL',
  () => {
    let postgres: ScratchPostgres;
    let poolA: pg.Pool;
    let poolB: pg.Pool;

    beforeAll(async () => {
      postgres = await startPostgres();
      poolA = new pg.Pool({ connectionString: postgres.url, max: 8 });
      poolB = new pg.Pool({ connectionString: postgres.url, max: 8 });
      for (const pool of [poolA, poolB]) pool.on('error', () => {});
      await migratePostgres(poolA);
    });

    afterAll(async () => {
      await poolA?.end();
      await poolB?.end();
      await postgres?.stop();
    });

    const apiLimiters = () => [
      new PostgresRateLimiter(poolA, { name: 'api', limit: 150, windowMs: WINDOW }),
      new PostgresRateLimiter(poolB, { name: 'api', limit: 150, windowMs: WINDOW }),
    ];

    it('150 concurrent hits spread over two instances are all allowed, each seeing its own count; the 151st is refused', async () => {
      const [a, b] = apiLimiters() as [PostgresRateLimiter, PostgresRateLimiter];
      const key = 'biz_concurrent:test';
      const decisions = await Promise.all(
        Array.from({ length: 150 }, (_, i) => (i % 2 === 0 ? a : b).hit(key, T0 + i)),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(150);
      // Counted one after another: the remaining counts are 149 … 0, each exactly once.
      expect(decisions.map((decision) => decision.remaining).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 150 }, (_, i) => i),
      );

      const refused = await b.hit(key, T0 + 1_000);
      // The oldest hit (T0) leaves the window at T0 + 60 s: 59 s after this one.
      expect(refused).toEqual({ allowed: false, limit: 150, remaining: 0, resetSeconds: 59 });
      const alsoRefused = await a.hit(key, T0 + 30_500);
      expect(alsoRefused).toEqual({ allowed: false, limit: 150, remaining: 0, resetSeconds: 30 });

      // When T0 leaves the window one hit comes back, and only one: the next is refused until T0 + 1 ms leaves.
      expect(await a.hit(key, T0 + WINDOW)).toEqual({
        allowed: true,
        limit: 150,
        remaining: 0,
        resetSeconds: 1,
      });
      expect(await b.hit(key, T0 + WINDOW)).toEqual({
        allowed: false,
        limit: 150,
        remaining: 0,
        resetSeconds: 1,
      });
    });

    it('over the limit under concurrency: 200 hits at once over two instances allow exactly 150', async () => {
      const [a, b] = apiLimiters() as [PostgresRateLimiter, PostgresRateLimiter];
      const decisions = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).hit('biz_burst:live', T0 + (i % 7))),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(150);
      for (const decision of decisions.filter((each) => !each.allowed)) {
        expect(decision).toEqual({ allowed: false, limit: 150, remaining: 0, resetSeconds: 60 });
      }
      const row = await poolA.query(
        "SELECT cardinality(hits) AS n FROM rate_limit_windows WHERE key = 'api:biz_burst:live'",
      );
      expect(row.rows[0].n).toBe(150);
    });

    it('decides exactly as the in-process SlidingWindowLimiter over a long mixed sequence of hits and peeks', async () => {
      const inProcess = new SlidingWindowLimiter(5, 10_000);
      const [a, b] = [poolA, poolB].map(
        (pool) => new PostgresRateLimiter(pool, { name: 'compare', limit: 5, windowMs: 10_000 }),
      ) as [PostgresRateLimiter, PostgresRateLimiter];
      // A fixed pseudo-random walk, steps of 0 to 1.5 s (several calls in one millisecond included).
      let seed = 42;
      const next = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      let now = T0;
      const expected: LimitDecision[] = [];
      const actual: LimitDecision[] = [];
      for (let i = 0; i < 400; i++) {
        now += next() < 0.2 ? 0 : Math.floor(next() * 1_500);
        // Four keys, the last of them only ever peeked at; about a quarter of the calls are peeks.
        const key = `k${Math.floor(next() * 4)}`;
        const limiter = i % 2 === 0 ? a : b;
        if (key === 'k3' || next() < 0.25) {
          expected.push(inProcess.peek(key, now));
          actual.push(await limiter.peek(key, now));
        } else {
          expected.push(inProcess.hit(key, now));
          actual.push(await limiter.hit(key, now));
        }
      }
      expect(actual).toEqual(expected);
      expect(expected.filter((decision) => !decision.allowed).length).toBeGreaterThan(20);
      expect(expected.filter((decision) => decision.allowed).length).toBeGreaterThan(100);
      // A peek counts nothing: the key only ever peeked at has no row.
      const peeked = await poolA.query("SELECT 1 FROM rate_limit_windows WHERE key = 'compare:k3'");
      expect(peeked.rowCount).toBe(0);
    });

    it('keys and limiters are counted apart; prune drops only keys with no hit left in the window', async () => {
      const api = new PostgresRateLimiter(poolA, { name: 'apart', limit: 1, windowMs: WINDOW });
      const checkout = new PostgresRateLimiter(poolB, { name: 'checkout', limit: 1, windowMs: WINDOW });
      expect((await api.hit('same-key', T0)).allowed).toBe(true);
      expect((await api.hit('other-key', T0 + 30_000)).allowed).toBe(true);
      expect((await checkout.hit('same-key', T0)).allowed).toBe(true);
      expect((await api.hit('same-key', T0 + 1)).allowed).toBe(false);

      expect(await api.prune(T0 + WINDOW)).toBe(1); // same-key's only hit has left; other-key's has not
      const left = await poolA.query(
        "SELECT key FROM rate_limit_windows WHERE key LIKE 'apart:%' OR key LIKE 'checkout:%' ORDER BY key",
      );
      expect(left.rows.map((row) => row.key)).toEqual(['apart:other-key', 'checkout:same-key']);
      expect(await api.hit('same-key', T0 + WINDOW)).toEqual({
        allowed: true,
        limit: 1,
        remaining: 0,
        resetSeconds: 60,
      });
    });

    it('while the database is down a hit rejects; a clean restart keeps the counts, a crash forgets them', async () => {
      const [a, b] = [poolA, poolB].map(
        (pool) => new PostgresRateLimiter(pool, { name: 'outage', limit: 3, windowMs: WINDOW }),
      ) as [PostgresRateLimiter, PostgresRateLimiter];
      for (let i = 0; i < 3; i++) expect((await a.hit('biz', T0 + i)).allowed).toBe(true);

      const restarting = postgres.restart({ downMs: 1_000 });
      await eventually(() =>
        poolB.query('SELECT 1').then(
          () => undefined,
          () => true,
        ),
      );
      // The caller turns this rejection into 503 in the envelope; nothing is counted or allowed by guess.
      await expect(b.hit('biz', T0 + 10)).rejects.toThrow();
      await restarting;
      // The same pools reconnect by themselves, and the three hits are still in the window.
      expect(await b.hit('biz', T0 + 20)).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 60,
      });

      // UNLOGGED: a crash empties the table (see its migration), which gives the key a fresh window.
      await postgres.restart({ mode: 'immediate' });
      expect(await a.hit('biz', T0 + 30)).toEqual({
        allowed: true,
        limit: 3,
        remaining: 2,
        resetSeconds: 60,
      });
    });

    it('refuses a limiter that could never allow a hit', () => {
      expect(() => new PostgresRateLimiter(poolA, { name: 'api', limit: 0, windowMs: WINDOW })).toThrow(
        /limit/,
      );
      expect(() => new PostgresRateLimiter(poolA, { name: 'api:x', limit: 1, windowMs: WINDOW })).toThrow(
        /name/,
      );
    });
  },
);
