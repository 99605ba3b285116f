-- PostgreSQL side of step 005_idempotent_requests (beside 005_idempotent_requests.sqlite.sql): Idempotency-Key on every POST. A key is
-- remembered per scope: `<business id>:<environment>` for a key-authenticated call, `session:<session id>` for
-- a widget-token call. `request_hash` covers the method, the path and the body. `response_body` is sealed with
-- the SecretBox. The primary key is what makes a key unique across instances: the pending mark is an
-- INSERT … ON CONFLICT DO NOTHING, and the instance whose insert lost answers from the winner's row.
-- (SQLite's older `idempotency_keys` table, which 005 folds in and drops there, never existed here.)

CREATE TABLE idempotent_requests (
  scope           text NOT NULL,
  idempotency_key text NOT NULL,
  request_hash    bytea NOT NULL,
  status_code     integer NOT NULL,
  response_body   text NOT NULL,
  created_at      bigint NOT NULL,
  PRIMARY KEY (scope, idempotency_key)
);
CREATE INDEX idempotent_requests_by_age ON idempotent_requests (created_at);
