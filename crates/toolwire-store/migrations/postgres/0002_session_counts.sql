-- Each session's stored results and failed results, kept by every append (under the
-- session row's lock, in the same transaction as the message), so the session list reads
-- them without counting messages. The same columns as SQLite's 0004.
ALTER TABLE sessions ADD COLUMN result_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN error_count BIGINT NOT NULL DEFAULT 0;

-- Sessions stored before this migration: counted once from their messages.
UPDATE sessions SET
    result_count = (SELECT COUNT(*) FROM messages m
                    WHERE m.session_id = sessions.id AND m.role = 'tool_result'),
    error_count = (SELECT COUNT(*) FROM messages m
                   WHERE m.session_id = sessions.id AND m.role = 'tool_result'
                     AND (m.body::jsonb ->> 'status') = 'error');
