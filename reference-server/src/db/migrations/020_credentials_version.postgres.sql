-- PostgreSQL side of step 020 (issue 38): the change counter SQLite has had since step 012, so that an instance
-- may answer a key it found before without reading it again, and still refuse a key rolled (or a business
-- changed) by any instance at the very next request.
--
-- How it is read (db/postgres/postgres-api-key-repository.ts, middleware/authenticate.ts): an instance
-- remembers a key with the version read in the same statement as the key; a later request with that key takes
-- it from memory, and the rate limiter's hit, which every API-key request makes anyway, reads the version in
-- its own statement (db/postgres/postgres-rate-limiter.ts). The same version: nothing about keys or businesses
-- changed in between, and the remembered answer is the one a read would give. Another: the key is read again
-- before the request goes on. So a key costs no round trip of its own, and a change committed anywhere before
-- a request's hit is seen by that request, as when every request read its key.
--
-- One row, bumped in the transaction that changes a key or a business, whoever makes it (an instance, the CLI,
-- raw SQL): it becomes visible exactly when that change does. A sequence would not do: `nextval` is seen by
-- others before the change commits, and a key read in between would be remembered under the new number with its
-- old rows. Statement-level triggers: one bump per statement, whatever it touched. Keys and businesses change
-- rarely (signup, KYC approval, a key rolled), so the row's lock is no queue.
CREATE TABLE credentials_version (
  only_row integer PRIMARY KEY CHECK (only_row = 1),
  version  bigint  NOT NULL
);
INSERT INTO credentials_version (only_row, version) VALUES (1, 0);

CREATE FUNCTION servicepay_credentials_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE credentials_version SET version = version + 1 WHERE only_row = 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION servicepay_credentials_changed();
CREATE TRIGGER businesses_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON businesses
  FOR EACH STATEMENT EXECUTE FUNCTION servicepay_credentials_changed();
