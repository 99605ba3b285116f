-- Money: every bank transfer the service settled (once per transfer id), every credit it could not apply to a
-- session (recorded and refunded through the bank), and the audit log of who did what.

-- Once per bank transfer id, whoever told the service of it first: a notification, or the bank's answer to an
-- account closing ("already credited"). A second notification of the same transfer changes nothing.
CREATE TABLE settled_transfers (
  transfer_id     TEXT PRIMARY KEY,
  account_number  TEXT NOT NULL,
  session_id      TEXT,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  bank_outcome    TEXT NOT NULL,
  -- credited | mismatch | not_credited | unapplied | unknown_account
  result          TEXT NOT NULL,
  source          TEXT NOT NULL CHECK (source IN ('notification', 'account_close')),
  settled_at      INTEGER NOT NULL
) STRICT;
-- Transfers settled before this migration were settled by their notifications.
INSERT OR IGNORE INTO settled_transfers
  SELECT transfer_id, account_number, session_id, amount, currency, bank_outcome, result, 'notification', received_at
  FROM bank_notifications ORDER BY received_at;

-- A credit the bank made that no session could take. Never only logged: recorded here, told to the merchant
-- (event `session.credit_unapplied`) and refunded through the bank in the same transaction.
CREATE TABLE unapplied_credits (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  transfer_id     TEXT NOT NULL UNIQUE,
  -- Null when the account is unknown to the service: no merchant to tell, the operator sees it.
  business_id     TEXT,
  environment     TEXT,
  session_id      TEXT,
  account_number  TEXT NOT NULL,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  -- session_ended | account_closed | currency_mismatch | amount_mismatch | unknown_account
  reason          TEXT NOT NULL,
  -- refunded: the bank returned it to the payer; refund_refused: the bank holds no such credit to return.
  refund_status   TEXT NOT NULL CHECK (refund_status IN ('refunded', 'refund_refused')),
  refund_id       TEXT,
  created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX unapplied_credits_by_business ON unapplied_credits (business_id, seq);

-- The credit a `session.credit_unapplied` event tells of (JSON), sent beside the session in its webhook.
ALTER TABLE events ADD COLUMN credit TEXT;

-- Endpoints that subscribed to every event type so far get the new one too: they asked for everything.
UPDATE webhook_endpoints SET events = json_insert(events, '$[#]', 'session.credit_unapplied')
WHERE (SELECT count(DISTINCT value) FROM json_each(webhook_endpoints.events)
       WHERE value IN ('session.successful', 'session.mismatch', 'session.expired', 'session.cancelled')) = 4;

-- Who did what, when: key rolls, KYC approvals, webhook endpoint changes, cancels, refunds. Append only.
CREATE TABLE audit_log (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT NOT NULL UNIQUE,
  at           INTEGER NOT NULL,
  -- cli:<os user> | secret_key:<environment> | widget_token | service
  actor        TEXT NOT NULL,
  action       TEXT NOT NULL,
  business_id  TEXT,
  environment  TEXT,
  target       TEXT,
  details      TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX audit_log_by_business ON audit_log (business_id, seq);

-- The simulated bank's own books: money it sent back to a payer. The service never reads this table.
CREATE TABLE bank_refunds (
  id           TEXT PRIMARY KEY,
  transfer_id  TEXT NOT NULL UNIQUE REFERENCES bank_transfers (id),
  amount       INTEGER NOT NULL,
  currency     TEXT NOT NULL,
  reason       TEXT NOT NULL,
  created_at   INTEGER NOT NULL
) STRICT;

-- Closing an account asks the bank's books whether it was credited: one lookup per cancel or expiry.
CREATE INDEX bank_transfers_by_account ON bank_transfers (account_number);
