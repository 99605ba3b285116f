-- A credit no session can take is recorded first and refunded after (issue 13: the bank is asked outside any
-- database transaction, as a real bank's API is): `refund_pending` until the bank's answer is recorded. SQLite
-- cannot change a CHECK constraint in place, so the table is rebuilt with the same rows.
CREATE TABLE unapplied_credits_next (
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
  -- refund_pending: recorded, the bank not asked or not answered yet; refunded: the bank returned it to the
  -- payer; refund_refused: the bank holds no such credit to return.
  refund_status   TEXT NOT NULL CHECK (refund_status IN ('refund_pending', 'refunded', 'refund_refused')),
  refund_id       TEXT,
  created_at      INTEGER NOT NULL
) STRICT;
INSERT INTO unapplied_credits_next SELECT * FROM unapplied_credits;
DROP TABLE unapplied_credits;
ALTER TABLE unapplied_credits_next RENAME TO unapplied_credits;
CREATE INDEX unapplied_credits_by_business ON unapplied_credits (business_id, seq);
-- What the sweeper asks the bank again: refunds an instance recorded and did not see answered.
CREATE INDEX unapplied_credits_refund_pending ON unapplied_credits (seq) WHERE refund_status = 'refund_pending';
