-- PostgreSQL side of step 004_portal (beside 004_portal.sqlite.sql): developer portal sign-ins. The cookie holds a random id;
-- only its SHA-256 is stored, so a copy of the database opens no portal session. `environment` is what the
-- portal shows (never API routing). `api_key_id` is the secret key that opened it: rolling that key ends the
-- session too.

CREATE TABLE portal_sessions (
  id_hash       bytea PRIMARY KEY,
  business_id   text NOT NULL REFERENCES businesses (id),
  api_key_id    text NOT NULL REFERENCES api_keys (id),
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  created_at    bigint NOT NULL,
  last_seen_at  bigint NOT NULL,
  -- Absolute end; the idle limit is checked against last_seen_at.
  expires_at    bigint NOT NULL
);
CREATE INDEX portal_sessions_by_expiry ON portal_sessions (expires_at);
