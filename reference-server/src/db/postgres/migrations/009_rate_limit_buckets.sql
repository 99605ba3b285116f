-- PostgreSQL only: the rate limits counted per second (db/postgres/postgres-rate-limiter.ts), replacing 007's
-- row of every allowed hit's time, whose rewrite on each hit grew with the budget (2.42 ms per hit with 3,000
-- times in the row, 0.28 ms with 150; docs/benchmarks.md).
-- One row per key (`api:<business>:<environment>`, `checkout:<address>`, …) holding, for each whole second of
-- the window that had allowed hits, the second and how many: at most windowMs / 1000 pairs (60 for a minute),
-- whatever the limit. A hit is one INSERT … ON CONFLICT DO UPDATE, which locks the row, so concurrent hits on
-- one key from any number of instances are counted one after another.
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
