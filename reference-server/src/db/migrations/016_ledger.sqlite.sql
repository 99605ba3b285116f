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
-- A business's ledger in time order, newest first or oldest first (the API's pages, the exports' stream): a
-- date range reads only its days, and a keyset page continues in the index's own order (created_at, seq),
-- never sorting the range it is in.
CREATE INDEX balance_transactions_by_owner ON balance_transactions (business_id, environment, created_at, seq);
CREATE INDEX balance_transactions_by_session ON balance_transactions (session_id, seq);
-- Nothing twice, whatever two instances race: one entry of each type per transfer for the transfer's own
-- movements, one per refund for a merchant's refund.
CREATE UNIQUE INDEX balance_transactions_once_per_transfer ON balance_transactions (transfer_id, type)
  WHERE refund_id IS NULL;
CREATE UNIQUE INDEX balance_transactions_once_per_refund ON balance_transactions (refund_id, type)
  WHERE refund_id IS NOT NULL;

-- The movements made before this step, written as the code from this step on writes them (ledger/ledger-entries.ts;
-- test/api/ledger-backfill.test.ts holds the two to each other), so that a database upgraded with money in it
-- has a ledger, and a balance, from its first day. Ids are made from the movement's own id (the transfer's or
-- the refund's, with a letter per type), so they are unique and stable; the payer's account comes from the
-- simulated bank's books where they are in this database, and is null otherwise (a real bank's).
INSERT INTO balance_transactions
  (id, business_id, environment, type, amount, currency, session_id, refund_id, transfer_id, payer_account, created_at)
SELECT id, business_id, environment, type, amount, currency, session_id, refund_id, transfer_id,
       CASE WHEN payer IS NULL THEN NULL ELSE substr('********************', 1, max(length(payer) - 4, 0)) || substr(payer, -4) END, created_at
FROM (
  -- A credit that paid its session.
  SELECT 'txn_p' || substr(st.transfer_id, 5) AS id, s.business_id, s.environment, 'payment' AS type, st.amount,
         st.currency, st.session_id, NULL AS refund_id, st.transfer_id, bt.payer_account AS payer,
         st.settled_at AS created_at, 1 AS k
  FROM settled_transfers st JOIN sessions s ON s.id = st.session_id
  LEFT JOIN bank_transfers bt ON bt.id = st.transfer_id
  WHERE st.result = 'credited'
  UNION ALL
  -- A transfer the bank returned on arrival: received and returned.
  SELECT 'txn_i' || substr(st.transfer_id, 5), s.business_id, s.environment, 'transfer_received', st.amount,
         st.currency, st.session_id, NULL, st.transfer_id, bt.payer_account, st.settled_at, 2
  FROM settled_transfers st JOIN sessions s ON s.id = st.session_id
  LEFT JOIN bank_transfers bt ON bt.id = st.transfer_id
  WHERE st.bank_outcome = 'returned'
  UNION ALL
  SELECT 'txn_o' || substr(st.transfer_id, 5), s.business_id, s.environment, 'transfer_return', -st.amount,
         st.currency, st.session_id, NULL, st.transfer_id, bt.payer_account, st.settled_at, 3
  FROM settled_transfers st JOIN sessions s ON s.id = st.session_id
  LEFT JOIN bank_transfers bt ON bt.id = st.transfer_id
  WHERE st.bank_outcome = 'returned'
  UNION ALL
  -- A merchant's refund the bank paid out.
  SELECT 'txn_r' || substr(r.id, 5), r.business_id, r.environment, 'refund', -r.amount, r.currency, r.session_id,
         r.id, r.transfer_id, bpr.payer_account, r.updated_at, 4
  FROM refunds r LEFT JOIN bank_payer_refunds bpr ON bpr.id = r.id
  WHERE r.status = 'succeeded'
  UNION ALL
  -- A credit no session took, sent back by the bank: in and out, as the bank's books have it.
  SELECT 'txn_u' || substr(uc.transfer_id, 5), uc.business_id, uc.environment, 'unapplied_credit',
         coalesce(br.amount, uc.amount), coalesce(br.currency, uc.currency), uc.session_id, NULL, uc.transfer_id,
         bt.payer_account, coalesce(br.created_at, uc.created_at), 5
  FROM unapplied_credits uc LEFT JOIN bank_refunds br ON br.transfer_id = uc.transfer_id
  LEFT JOIN bank_transfers bt ON bt.id = uc.transfer_id
  WHERE uc.refund_status = 'refunded' AND uc.business_id IS NOT NULL
  UNION ALL
  SELECT 'txn_v' || substr(uc.transfer_id, 5), uc.business_id, uc.environment, 'unapplied_credit_return',
         -coalesce(br.amount, uc.amount), coalesce(br.currency, uc.currency), uc.session_id, NULL, uc.transfer_id,
         bt.payer_account, coalesce(br.created_at, uc.created_at), 6
  FROM unapplied_credits uc LEFT JOIN bank_refunds br ON br.transfer_id = uc.transfer_id
  LEFT JOIN bank_transfers bt ON bt.id = uc.transfer_id
  WHERE uc.refund_status = 'refunded' AND uc.business_id IS NOT NULL
) AS movements
ORDER BY created_at, k, transfer_id;
