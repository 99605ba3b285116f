-- Merchant webhook endpoints and the outbox of deliveries, written in the same transaction as the event.

CREATE TABLE webhook_endpoints (
  -- Insertion order, for cursor pagination (newest first).
  seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
  id                    TEXT NOT NULL UNIQUE,
  business_id           TEXT NOT NULL REFERENCES businesses (id),
  environment           TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  url                   TEXT NOT NULL,
  -- JSON array of subscribed event types.
  events                TEXT NOT NULL,
  description           TEXT,
  enabled               INTEGER NOT NULL DEFAULT 1,
  disabled_reason       TEXT,
  -- Signing secrets must be usable to sign, so they are encrypted at rest (SecretBox), not hashed.
  secret_ciphertext     TEXT NOT NULL,
  previous_secret_ciphertext TEXT,
  previous_secret_expires_at INTEGER,
  -- Failed attempts in a row, and when the first of them happened: the basis for disabling a dead endpoint.
  consecutive_failures  INTEGER NOT NULL DEFAULT 0,
  failing_since         INTEGER,
  created_at            INTEGER NOT NULL,
  updated_at            INTEGER NOT NULL,
  deleted_at            INTEGER
) STRICT;
CREATE INDEX webhook_endpoints_by_owner ON webhook_endpoints (business_id, environment, seq DESC)
  WHERE deleted_at IS NULL;

-- The outbox: a pending row is the queue. `next_attempt_at` is NULL while the endpoint is disabled (parked).
CREATE TABLE webhook_deliveries (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  id               TEXT NOT NULL UNIQUE,
  endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id),
  event_id         TEXT NOT NULL REFERENCES events (id),
  status           TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count    INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, seq DESC);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id       TEXT NOT NULL REFERENCES webhook_deliveries (id),
  attempted_at      INTEGER NOT NULL,
  status_code       INTEGER,
  latency_ms        INTEGER NOT NULL,
  error             TEXT,
  -- At most 1 KB of the receiver's answer.
  response_excerpt  TEXT
) STRICT;
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, id);
