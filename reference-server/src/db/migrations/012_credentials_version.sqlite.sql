-- Issue 12: authenticating a request read its key and the key's business (one join) on every request, the
-- largest read of a session create. The service now keeps the keys it found in memory (ApiKeyRepository) and,
-- before it trusts one, reads this single counter instead. Every change to `api_keys` or `businesses` bumps it
-- in the same transaction, whoever makes it (this process, the CLI on the same file, a test's own connection,
-- raw SQL of a future migration), so a key rolled or a business approved anywhere is seen by the very next
-- request, as when every request read the key. Nothing on PostgreSQL (012_credentials_version.postgres.sql): there each request still reads its key
-- (several instances, and no cheap read that would tell them another changed a key).
CREATE TABLE credentials_version (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  version  INTEGER NOT NULL
) STRICT;
INSERT INTO credentials_version (only_row, version) VALUES (1, 0);

CREATE TRIGGER api_keys_inserted AFTER INSERT ON api_keys
  BEGIN UPDATE credentials_version SET version = version + 1; END;
CREATE TRIGGER api_keys_updated AFTER UPDATE ON api_keys
  BEGIN UPDATE credentials_version SET version = version + 1; END;
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
  BEGIN UPDATE credentials_version SET version = version + 1; END;
CREATE TRIGGER businesses_inserted AFTER INSERT ON businesses
  BEGIN UPDATE credentials_version SET version = version + 1; END;
CREATE TRIGGER businesses_updated AFTER UPDATE ON businesses
  BEGIN UPDATE credentials_version SET version = version + 1; END;
CREATE TRIGGER businesses_deleted AFTER DELETE ON businesses
  BEGIN UPDATE credentials_version SET version = version + 1; END;
