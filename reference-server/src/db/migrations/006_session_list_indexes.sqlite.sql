-- The merchant's session list filtered by status (`GET /api/widget/sessions?status=…`), newest first. Without it
-- the filter walked the owner index `sessions_by_owner (business_id, environment, seq DESC)` and skipped the rows
-- of other statuses one by one: 272 ms at 1M sessions for a status that is rare among the newest (issue 12).
-- With it the query reads the page it answers and nothing else, whatever the table's size. `seq` is the rowid;
-- it is named so the index orders each status's sessions by creation, which is the list's order.
-- The `?reference=` filter needs no new index: it is answered from the unique (business_id, environment,
-- reference) index, by its own query in db/sessions.ts.
CREATE INDEX sessions_by_owner_status ON sessions (business_id, environment, status, seq);
