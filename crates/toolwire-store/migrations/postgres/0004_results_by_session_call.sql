-- A call id names a call within its session only (providers and agents repeat ids across
-- sessions), so results are looked up by (session, call id); the index by call id alone
-- served the unscoped lookup that is gone. The same index as SQLite's 0006.
CREATE INDEX messages_by_session_call ON messages (session_id, call_id);
DROP INDEX messages_by_call;
