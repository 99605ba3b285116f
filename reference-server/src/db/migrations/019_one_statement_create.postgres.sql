-- PostgreSQL side of step 019 (issue 38: fewer round trips per session create).

-- Refuses the statement it is called in with SQLSTATE p_state: how one statement that writes several tables in
-- data-modifying CTEs undoes all of them when a later part finds it must not stand (a statement is its own
-- transaction when sent alone). VOLATILE, so the planner calls it only where the query reaches it (inside a
-- CASE branch), never ahead of time.
-- Used by the session create (db/postgres/postgres-session-repository.ts): the session and its remembered
-- Idempotency-Key answer in one statement, refused as a whole ('SP409') when the key is held by another request.
CREATE FUNCTION servicepay_refuse(p_state text, p_message text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = p_state, MESSAGE = p_message;
END
$$;

