-- PostgreSQL only: a push message too large for NOTIFY (its payload must stay under 8000 bytes) is written here
-- and the notification carries its id instead; every listening instance reads it by that id
-- (db/postgres/notification-channel.ts). Rows are deleted once older than a minute: a listener reads its row
-- within milliseconds, and one that was disconnected that long replays from `events` anyway.
-- UNLOGGED: losing these in a database crash loses nothing more than the notifications the crash lost.
CREATE UNLOGGED TABLE push_overflow (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  payload     text NOT NULL,
  created_at  bigint NOT NULL
);
CREATE INDEX push_overflow_by_age ON push_overflow (created_at);
