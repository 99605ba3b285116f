-- Issue 26: a merchant sends a payer's money back, in part or in full, several times per payment.
--
-- `sessions.amount_refunded`: what the session's refunds hold, pending and succeeded (a failed refund gives its
-- amount back). A refund is admitted by one conditional UPDATE of this column (`amount_refunded + amount <=
-- amount`), never by a sum read first: of any number of concurrent refunds only those that fit apply.
ALTER TABLE sessions ADD COLUMN amount_refunded INTEGER NOT NULL DEFAULT 0;

-- A merchant's refund of a successful session: recorded `pending` with the session's admission, sent to the
-- bank after the commit, and `succeeded` or `failed` once the bank's answer is recorded.
CREATE TABLE refunds (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  business_id     TEXT NOT NULL REFERENCES businesses (id),
  environment     TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  session_id      TEXT NOT NULL REFERENCES sessions (id),
  -- The bank transfer that paid the session: the refund goes back to the account it came from.
  transfer_id     TEXT NOT NULL,
  amount          INTEGER NOT NULL CHECK (amount > 0),
  currency        TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  reason          TEXT,
  failure_reason  TEXT,
  -- Who asked: secret_key:<environment> | portal:<key id> | cli:<os user>.
  requested_by    TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX refunds_by_session ON refunds (session_id, seq);
CREATE INDEX refunds_by_owner ON refunds (business_id, environment, seq);
-- What the sweeper asks the bank again: refunds an instance recorded and did not see answered.
CREATE INDEX refunds_pending ON refunds (seq) WHERE status = 'pending';

-- A refund event (`refund.succeeded`, `refund.failed`) carries the refund beside the session in its webhook.
ALTER TABLE events ADD COLUMN refund TEXT;

-- The simulated bank's books: the account a payer's transfer came from (null for transfers booked before it
-- was kept: they go back to the bank's default test payer), and the money it sent back to payers at a
-- merchant's request, keyed by the service's refund id (one movement per refund, however often it is asked).
ALTER TABLE bank_transfers ADD COLUMN payer_account TEXT;
CREATE TABLE bank_payer_refunds (
  id              TEXT PRIMARY KEY,
  transfer_id     TEXT NOT NULL REFERENCES bank_transfers (id),
  payer_account   TEXT NOT NULL,
  amount          INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  -- credited: the payer's account has the money back; refused: nothing moved (refused_reason says why).
  outcome         TEXT NOT NULL CHECK (outcome IN ('credited', 'refused')),
  refused_reason  TEXT,
  created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX bank_payer_refunds_by_transfer ON bank_payer_refunds (transfer_id);
CREATE INDEX bank_payer_refunds_by_payer ON bank_payer_refunds (payer_account);

-- Endpoints that subscribed to every event type so far get the refund events too: they asked for everything
-- (as step 003 did for `session.credit_unapplied`).
UPDATE webhook_endpoints SET events = json_insert(events, '$[#]', 'refund.succeeded', '$[#]', 'refund.failed')
WHERE (SELECT count(DISTINCT value) FROM json_each(webhook_endpoints.events)
       WHERE value IN ('session.successful', 'session.mismatch', 'session.expired', 'session.cancelled',
                       'session.credit_unapplied')) = 5;
