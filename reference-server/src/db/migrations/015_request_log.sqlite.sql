-- Issue 30: the portal's request log and Events page.
--
-- `request_log`: the recent API requests of each business and environment (method, path with credentials
-- replaced, status, Request-Id, the key's prefix and last four, duration, the error envelope of a 4xx/5xx).
-- Written in batches off the request's path; the expiry sweeper keeps the newest 1,000 per business and
-- environment (REQUEST_LOG_KEEP in db/request-log.ts). Never a credential (docs/protocol.md, "Request log").
CREATE TABLE request_log (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  request_id   TEXT NOT NULL,
  business_id  TEXT NOT NULL REFERENCES businesses (id),
  environment  TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  method       TEXT NOT NULL,
  path         TEXT NOT NULL,
  status       INTEGER NOT NULL,
  key_hint     TEXT NOT NULL,
  duration_ms  INTEGER NOT NULL,
  error_body   TEXT,
  created_at   INTEGER NOT NULL
) STRICT;
-- The Requests page (newest first, a page at a time) and the sweeper's prune, per business and environment.
CREATE INDEX request_log_by_owner ON request_log (business_id, environment, seq DESC);
-- The search by Request-Id.
CREATE INDEX request_log_by_request_id ON request_log (request_id);

-- The Events page: every event of a business and environment, newest first (until now events were read by
-- session only, events_by_session).
CREATE INDEX events_by_owner ON events (business_id, environment, seq DESC);
