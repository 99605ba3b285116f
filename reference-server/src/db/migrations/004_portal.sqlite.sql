-- Developer portal sign-ins. The cookie holds a random id; only its SHA-256 is stored, so a copy of the
-- database opens no portal session. `environment` is what the portal shows (spec §5.4: never API routing).
-- `api_key_id` is the secret key that opened it: rolling that key ends the session too, so a leaked key that
-- is rolled takes every portal session opened with it along (the portal that rolled it moves to the new key).

CREATE TABLE portal_sessions (
  id_hash       BLOB PRIMARY KEY,
  business_id   TEXT NOT NULL REFERENCES businesses (id),
  api_key_id    TEXT NOT NULL REFERENCES api_keys (id),
  environment   TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  created_at    INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL,
  -- Absolute end; the idle limit is checked against last_seen_at.
  expires_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX portal_sessions_by_expiry ON portal_sessions (expires_at);
