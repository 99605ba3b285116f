-- Idempotency-Key on every POST (not only session create). A key is remembered per scope: `<business id>:<environment>`
-- for a key-authenticated call, `session:<session id>` for a widget-token call (the checkout has no business
-- scope of its own). `request_hash` covers the method, the path and the body, so the same key sent to another
-- route is refused like another body. `response_body` is sealed with the SecretBox (several answers hold a
-- secret: a client secret, a webhook signing secret).
--
-- Keys remembered before this migration are kept under their business scope; their hash covered the body
-- alone, so a retry across the upgrade answers 409 `idempotency_key_reused` (never a second session).

CREATE TABLE idempotent_requests (
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash    BLOB NOT NULL,
  status_code     INTEGER NOT NULL,
  response_body   TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (scope, idempotency_key)
) STRICT;
CREATE INDEX idempotent_requests_by_age ON idempotent_requests (created_at);

INSERT INTO idempotent_requests (scope, idempotency_key, request_hash, status_code, response_body, created_at)
  SELECT business_id || ':' || environment, idempotency_key, request_hash, status_code, response_body, created_at
  FROM idempotency_keys;
DROP TABLE idempotency_keys;
