-- PostgreSQL side of step 006_session_list_indexes (beside 006_session_list_indexes.sqlite.sql): the merchant's session list filtered by
-- status (`GET /api/widget/sessions?status=…`), newest first, reads the page it answers and nothing else. A
-- b-tree is read backwards as cheaply as forwards, so `seq` ascending serves the newest-first list as in SQLite.
CREATE INDEX sessions_by_owner_status ON sessions (business_id, environment, status, seq);
