-- Businesses, their API keys, payment sessions and everything the checkout needs.
-- Times are integer milliseconds since the epoch (UTC). Secrets are stored only as SHA-256 hashes.

CREATE TABLE businesses (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  kyc_status  TEXT NOT NULL DEFAULT 'pending' CHECK (kyc_status IN ('pending', 'approved')),
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  business_id  TEXT NOT NULL REFERENCES businesses (id),
  environment  TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  kind         TEXT NOT NULL CHECK (kind IN ('secret', 'publishable')),
  key_hash     BLOB NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  last4        TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER
) STRICT;
CREATE INDEX api_keys_by_owner ON api_keys (business_id, environment, kind) WHERE revoked_at IS NULL;

CREATE TABLE sessions (
  seq                  INTEGER PRIMARY KEY AUTOINCREMENT,
  id                   TEXT NOT NULL UNIQUE,
  business_id          TEXT NOT NULL REFERENCES businesses (id),
  environment          TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  reference            TEXT NOT NULL,
  status               TEXT NOT NULL CHECK (status IN
                         ('pending', 'awaiting_payment', 'mismatch', 'successful', 'expired', 'cancelled')),
  amount               INTEGER NOT NULL CHECK (amount > 0),
  currency             TEXT NOT NULL,
  payer_name           TEXT NOT NULL,
  payer_email          TEXT NOT NULL,
  payer_phone          TEXT,
  metadata             TEXT NOT NULL DEFAULT '{}',
  client_secret_hash   BLOB NOT NULL UNIQUE,
  client_secret_used_at INTEGER,
  account_number       TEXT,
  mismatch_received    INTEGER,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  expires_at           INTEGER NOT NULL,
  paid_at              INTEGER,
  UNIQUE (business_id, environment, reference)
) STRICT;
CREATE INDEX sessions_by_owner ON sessions (business_id, environment, seq DESC);
CREATE INDEX sessions_open_by_expiry ON sessions (expires_at)
  WHERE status IN ('pending', 'awaiting_payment', 'mismatch');

-- The service's record of each virtual account the bank provisioned for a session.
CREATE TABLE virtual_accounts (
  account_number  TEXT PRIMARY KEY,
  session_id      TEXT NOT NULL REFERENCES sessions (id),
  bank_name       TEXT NOT NULL,
  account_name    TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER NOT NULL,
  closed_at       INTEGER
) STRICT;
CREATE INDEX virtual_accounts_by_session ON virtual_accounts (session_id);
CREATE INDEX virtual_accounts_open_by_expiry ON virtual_accounts (expires_at) WHERE closed_at IS NULL;

CREATE TABLE widget_tokens (
  token_hash  BLOB PRIMARY KEY,
  session_id  TEXT NOT NULL REFERENCES sessions (id),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE idempotency_keys (
  business_id    TEXT NOT NULL,
  environment    TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash   BLOB NOT NULL,
  status_code    INTEGER NOT NULL,
  response_body  TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (business_id, environment, idempotency_key)
) STRICT;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

-- Every bank notification the service accepted, once per bank notification id.
CREATE TABLE bank_notifications (
  id              TEXT PRIMARY KEY,
  transfer_id     TEXT NOT NULL,
  account_number  TEXT NOT NULL,
  session_id      TEXT,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  bank_outcome    TEXT NOT NULL,
  -- What the service made of it: credited | mismatch | not_credited | unknown_account
  result          TEXT NOT NULL,
  received_at     INTEGER NOT NULL
) STRICT;

-- Every status transition of a session, in order. Webhook deliveries and push messages come from here.
CREATE TABLE events (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT NOT NULL UNIQUE,
  business_id  TEXT NOT NULL,
  environment  TEXT NOT NULL,
  session_id   TEXT NOT NULL REFERENCES sessions (id),
  type         TEXT NOT NULL,
  reason       TEXT,
  payload      TEXT NOT NULL,
  created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX events_by_session ON events (session_id, seq);

-- The simulated bank's own books. The bank is another party: the service never reads these tables.
CREATE TABLE bank_accounts (
  account_number  TEXT PRIMARY KEY,
  environment     TEXT NOT NULL,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  account_name    TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER NOT NULL,
  closed_at       INTEGER
) STRICT;

CREATE TABLE bank_transfers (
  id              TEXT PRIMARY KEY,
  account_number  TEXT NOT NULL,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  outcome         TEXT NOT NULL CHECK (outcome IN ('credited', 'returned')),
  return_reason   TEXT,
  created_at      INTEGER NOT NULL
) STRICT;

-- The bank's outbox: a notification stays here until the service acknowledged it.
CREATE TABLE bank_outbox (
  id               TEXT PRIMARY KEY,
  transfer_id      TEXT NOT NULL REFERENCES bank_transfers (id),
  payload          TEXT NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  delivered_at     INTEGER
) STRICT;
CREATE INDEX bank_outbox_due ON bank_outbox (next_attempt_at) WHERE delivered_at IS NULL;
