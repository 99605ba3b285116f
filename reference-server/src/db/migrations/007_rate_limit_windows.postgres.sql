-- PostgreSQL only (SQLite's limiters live in the one process): the rolling-window rate limits, counted in the
-- database so that every instance spends the same budget (db/postgres/postgres-rate-limiter.ts).
-- One row per key (`api:<business>:<environment>`, `checkout:<address>`, …) holding the times of the hits still
-- in the window, oldest first, never more than the limit: a hit is one INSERT … ON CONFLICT DO UPDATE, which
-- locks the row, so concurrent hits on one key from any number of instances are counted one after another.
-- UNLOGGED: no WAL for a row rewritten on every request. A crash of the database empties the table, which
-- forgets at most one window of counts: a rate limit, not a record anyone needs back.
CREATE UNLOGGED TABLE rate_limit_windows (
  key           text PRIMARY KEY,
  -- Epoch milliseconds of the allowed hits inside the window, ascending.
  hits          bigint[] NOT NULL,
  -- Whether the last hit was allowed: the upsert's answer (RETURNING sees only the new row).
  last_allowed  boolean NOT NULL
);
