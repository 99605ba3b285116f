-- PostgreSQL side of step 018 (issue 38: the rate limiter's batched hits as one row write).

-- p_hits hits of p_key at second p_second in ONE upsert (db/postgres/postgres-rate-limiter.ts sends the hits
-- of a key that arrived while its previous statement was out as one call): as many as fit under p_limit are
-- allowed, the first ones, and the rest refused. The same decisions as p_hits calls of rate_limit_hit (step 009)
-- one after another under the row's lock, which allow a hit while the window holds fewer than p_limit, so
-- exactly min(p_hits, p_limit − counted); but the row is rewritten once instead of p_hits times (those calls
-- were 41 % of PostgreSQL's statement time per create in `npm run bench -- postgres`).
-- Answers how many were allowed, the hits counted in the window after them, and the oldest second counted.
-- Exact across instances as rate_limit_hit is: the upsert locks the key's row and reads it as the previous hit
-- committed it. rate_limit_hit stays for an instance of the previous code during a rolling deploy; both count
-- in the same rows.
ALTER TABLE rate_limit_buckets ADD COLUMN last_allowed_hits integer NOT NULL DEFAULT 0;

CREATE FUNCTION rate_limit_hit_many(p_key text, p_second bigint, p_first bigint, p_limit integer, p_hits integer,
  OUT allowed integer, OUT in_window integer, OUT oldest bigint)
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rate_limit_buckets AS w (key, seconds, counts, last_allowed, last_allowed_hits)
  VALUES (p_key, ARRAY[p_second], ARRAY[least(p_hits, p_limit)], p_hits <= p_limit, least(p_hits, p_limit))
  ON CONFLICT (key) DO UPDATE SET (seconds, counts, last_allowed, last_allowed_hits) = (
    WITH kept AS (
      SELECT k.s, k.c FROM unnest(w.seconds, w.counts) AS k(s, c) WHERE k.s >= p_first
    ), fit AS (
      SELECT greatest(0, least(p_hits, p_limit - coalesce(sum(kept.c), 0)))::integer AS n FROM kept
    ), merged AS (
      SELECT m.s, sum(m.c)::integer AS c
        FROM (SELECT kept.s, kept.c FROM kept UNION ALL SELECT p_second, fit.n FROM fit WHERE fit.n > 0) AS m
       GROUP BY m.s
    )
    SELECT coalesce(array_agg(merged.s ORDER BY merged.s), '{}'),
           coalesce(array_agg(merged.c ORDER BY merged.s), '{}'),
           (SELECT fit.n = p_hits FROM fit),
           (SELECT fit.n FROM fit)
      FROM merged
  )
  RETURNING w.last_allowed_hits, (SELECT coalesce(sum(n), 0)::integer FROM unnest(w.counts) AS n), w.seconds[1]
  INTO allowed, in_window, oldest;
END
$$;
