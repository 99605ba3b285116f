-- Issue 36: money without a website. A payment link (`pl_…`) is a page payers open to pay a fixed amount;
-- each payer's session is made through it and names it. A link that is not reusable closes (`active = 0`,
-- `completed_at`) in the very transaction that makes its first session successful.
CREATE TABLE payment_links (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  business_id   TEXT NOT NULL REFERENCES businesses (id),
  environment   TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  name          TEXT NOT NULL,
  amount        INTEGER NOT NULL CHECK (amount > 0),
  currency      TEXT NOT NULL,
  reusable      INTEGER NOT NULL CHECK (reusable IN (0, 1)),
  active        INTEGER NOT NULL CHECK (active IN (0, 1)),
  success_url   TEXT,
  metadata      TEXT NOT NULL,
  completed_at  INTEGER,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
) STRICT;
-- The list (newest first, a page at a time) per business and environment.
CREATE INDEX payment_links_by_owner ON payment_links (business_id, environment, seq);

-- The hosted checkout's way back to the merchant, and the link a session was made through.
ALTER TABLE sessions ADD COLUMN payment_link_id TEXT REFERENCES payment_links (id);
ALTER TABLE sessions ADD COLUMN success_url TEXT;
ALTER TABLE sessions ADD COLUMN cancel_url TEXT;
-- `GET /api/widget/sessions?paymentLink=` and the portal's "payments through this link", newest first.
CREATE INDEX sessions_by_payment_link ON sessions (payment_link_id, seq) WHERE payment_link_id IS NOT NULL;
