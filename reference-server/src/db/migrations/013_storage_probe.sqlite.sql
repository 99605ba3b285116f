-- Issue 24: `GET /health` answers 503 while writes fail for lack of space, and must find out by itself when
-- space is back, even when no client write comes (a load balancer took the instance out of rotation). It does
-- so with one small write to this single row (`Store.probeWrite`): every commit appends a page to the WAL, so
-- the probe needs new space exactly as a client's write does. Nothing on PostgreSQL
-- (013_storage_probe.postgres.sql): its probe extends a temporary table instead.
CREATE TABLE storage_probe (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  probes   INTEGER NOT NULL
) STRICT;
INSERT INTO storage_probe (only_row, probes) VALUES (1, 0);
