-- Issue 37: books a finance person can close. Every movement of money for a business, recorded once, in the
-- write job that moved it (a session paid, a refund paid out, a credit or a transfer sent back to the payer),
-- never updated nor deleted afterwards: balances and exports are read from these rows alone.
--
-- `amount` is signed, in minor units of `currency`: money in is positive, money out negative. `transfer_id` is
-- the bank's id of the payer's transfer the movement belongs to (a refund names the transfer that paid the
-- session it refunds); `payer_account` is the payer's account as the bank gave it, masked to its last four
-- digits (`******6789`): the full number is never kept here. Which events make which entries:
-- docs/decisions/ledger-and-exports.md.
CREATE TABLE balance_transactions (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  business_id     TEXT NOT NULL REFERENCES businesses (id),
  environment     TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  type            TEXT NOT NULL,
  amount          INTEGER NOT NULL CHECK (amount <> 0),
  currency        TEXT NOT NULL,
  session_id      TEXT REFERENCES sessions (id),
  refund_id       TEXT,
  transfer_id     TEXT NOT NULL,
  payer_account   TEXT,
  created_at      INTEGER NOT NULL
) STRICT;
-- A business's ledger, newest first or oldest first (the API's pages, the exports' stream).
CREATE INDEX balance_transactions_by_owner ON balance_transactions (business_id, environment, seq);
-- A date range (exports, totals) reads only its days.
CREATE INDEX balance_transactions_by_time ON balance_transactions (business_id, environment, created_at);
CREATE INDEX balance_transactions_by_session ON balance_transactions (session_id, seq);
-- Nothing twice, whatever two instances race: one entry of each type per transfer for the transfer's own
-- movements, one per refund for a merchant's refund.
CREATE UNIQUE INDEX balance_transactions_once_per_transfer ON balance_transactions (transfer_id, type)
  WHERE refund_id IS NULL;
CREATE UNIQUE INDEX balance_transactions_once_per_refund ON balance_transactions (refund_id, type)
  WHERE refund_id IS NOT NULL;
