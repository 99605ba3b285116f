-- PostgreSQL side of step 010_refund_pending (SQLite's 007 before the one history).
-- A credit no session can take is recorded first and refunded after (issue 13: the bank is asked outside any
-- database transaction, as a real bank's API is): `refund_pending` until the bank's answer is recorded.
ALTER TABLE unapplied_credits DROP CONSTRAINT unapplied_credits_refund_status_check;
ALTER TABLE unapplied_credits ADD CONSTRAINT unapplied_credits_refund_status_check
  CHECK (refund_status IN ('refund_pending', 'refunded', 'refund_refused'));
-- What the sweeper asks the bank again: refunds an instance recorded and did not see answered.
CREATE INDEX unapplied_credits_refund_pending ON unapplied_credits (seq) WHERE refund_status = 'refund_pending';
