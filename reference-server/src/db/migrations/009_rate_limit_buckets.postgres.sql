-- PostgreSQL only: the rate limits counted per second (db/postgres/postgres-rate-limiter.ts), replacing 007's
-- row of every allowed hit's time, whose rewrite on each hit grew with the budget (2.42 ms per hit with 3,000
-- times in the row, 0.28 ms with 150; docs/benchmarks.md).
-- One row per key (`api:<business>:<environment>`, `checkout:<address>`, …) holding, for each whole second of
-- the window that had allowed hits, the second and how many: at most windowMs / 1000 pairs (60 for a minute),
-- whatever the limit. A hit is one call of rate_limit_hit below: one INSERT … ON CONFLICT DO UPDATE, which
-- locks the row, so concurrent hits on one key from any number of instances are counted one after another.
-- UNLOGGED: no WAL for a row rewritten on every request, and a commit that waits for no WAL flush. A crash of
-- the database empties the table, which forgets at most one window of counts: a rate limit, not a record
-- anyone needs back.
-- 007's rate_limit_windows is left in place: an instance still running the previous code during a rolling
-- deploy keeps counting there (so for that one deploy the instances on either side of it count apart). Drop it
-- in a later migration, once no instance runs that code.
CREATE UNLOGGED TABLE rate_limit_buckets (
  key           text PRIMARY KEY,
  -- Epoch seconds (epoch milliseconds / 1000, rounded down) that had allowed hits, ascending, no repeats.
  seconds       bigint[] NOT NULL,
  -- The allowed hits of each of those seconds: counts[i] belongs to seconds[i].
  counts        integer[] NOT NULL,
  -- Whether the last hit was allowed: the upsert's answer (RETURNING sees only the new row).
  last_allowed  boolean NOT NULL,
  CHECK (cardinality(seconds) = cardinality(counts))
);

-- One hit of p_key at second p_second, counted if the pairs of the seconds from p_first on add up to fewer than
-- p_limit: the row is created, or locked and rewritten with the pairs still in the window plus this hit
-- (added to its second's count) when allowed. Answers whether it was allowed, the hits now counted in the
-- window, and the oldest second counted.
-- Exact across instances: ON CONFLICT DO UPDATE locks the key's row and evaluates SET on the row as the
-- previous hit committed it (READ COMMITTED re-reads the latest version after waiting for the lock), so no
-- two hits can both take the last place; the lock is held until the caller's transaction (the statement
-- itself, in autocommit) commits. Seconds are merged with GROUP BY rather than appended, so a hit from an
-- instance whose clock is a little behind (its second older than the row's newest) still lands in its own
-- second, and the arrays stay sorted.
-- A PL/pgSQL function rather than a statement sent by the service: its plan is made once per connection and
-- kept, which a client-side named statement would also do, but that would not pass through a pooler in
-- transaction mode (docs/production.md allows PgBouncer); the call itself is a trivial statement to plan.
CREATE FUNCTION rate_limit_hit(p_key text, p_second bigint, p_first bigint, p_limit integer,
  OUT allowed boolean, OUT in_window integer, OUT oldest bigint)
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rate_limit_buckets AS w (key, seconds, counts, last_allowed)
  VALUES (p_key, ARRAY[p_second], ARRAY[1], true)
  ON CONFLICT (key) DO UPDATE SET (seconds, counts, last_allowed) = (
    WITH kept AS (
      SELECT k.s, k.c FROM unnest(w.seconds, w.counts) AS k(s, c) WHERE k.s >= p_first
    ), verdict AS (
      SELECT coalesce(sum(kept.c), 0) < p_limit AS ok FROM kept
    ), merged AS (
      SELECT m.s, sum(m.c)::integer AS c
        FROM (SELECT kept.s, kept.c FROM kept UNION ALL SELECT p_second, 1 FROM verdict WHERE verdict.ok) AS m
       GROUP BY m.s
    )
    SELECT coalesce(array_agg(merged.s ORDER BY merged.s), '{}'),
           coalesce(array_agg(merged.c ORDER BY merged.s), '{}'),
           (SELECT verdict.ok FROM verdict)
      FROM merged
  )
  RETURNING w.last_allowed, (SELECT sum(n)::integer FROM unnest(w.counts) AS n), w.seconds[1]
  INTO allowed, in_window, oldest;
END
$$;
