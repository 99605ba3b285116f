-- Issue 8: a test endpoint may point at loopback, and the deliveries API showed the first kilobyte of what the
-- receiver answered, so any test key could read any loopback port of the service's machine. Since then the
-- worker keeps an answer only when the address it came from is public, and marks a withheld one in `error`
-- (`withheld:receiver_not_public`, see `WITHHELD_PREFIX` in webhook-deliveries.ts). The attempts recorded
-- before that still hold their excerpts.
--
-- Nothing in a row tells which of the excerpts kept came from a public receiver: the check that decided it was
-- made on the connected socket's address, which is not stored, and only withheld answers are marked (they hold
-- no excerpt). The endpoint's URL does not tell either: a name may have resolved to loopback, the URL may have
-- changed since, and before the SSRF fix some spellings of loopback passed as public. So every excerpt stored
-- when this runs is cleared, public ones included (their loss is a debugging aid, not data a merchant needs),
-- and the attempt says why: `responseExcerptWithheld: "receiver_not_checked"`. An attempt with an excerpt
-- always answered without an error (an attempt has one or the other), so `error` is free for the mark.
-- Its PostgreSQL side is 011_withhold_unchecked_excerpts.postgres.sql (this was SQLite's 008 before the one history).
UPDATE webhook_attempts
   SET response_excerpt = NULL,
       error = CASE WHEN error IS NULL THEN 'withheld:receiver_not_checked' ELSE error END
 WHERE response_excerpt IS NOT NULL;
