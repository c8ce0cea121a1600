-- toolwire history schema. Kept to SQL that Postgres also accepts (the Postgres
-- migration differs only in the identity column of `messages`).

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    parent_id     TEXT REFERENCES sessions (id),
    title         TEXT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    -- The seq of the newest message; bumped in the same transaction as each append.
    last_seq      BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX sessions_by_parent ON sessions (parent_id);
CREATE INDEX sessions_by_update ON sessions (updated_at, id);

CREATE TABLE messages (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    seq           BIGINT NOT NULL,
    role          TEXT NOT NULL,
    call_id       TEXT,
    -- Canonical JSON: for a tool result, exactly serde_json's text of the ToolResult.
    body          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    UNIQUE (session_id, seq)
);

CREATE INDEX messages_by_call ON messages (call_id);

-- Which blobs each message references: what `gc` keeps.
CREATE TABLE message_blobs (
    message_id    BIGINT NOT NULL REFERENCES messages (id),
    blob          TEXT NOT NULL,
    PRIMARY KEY (message_id, blob)
);

CREATE INDEX message_blobs_by_blob ON message_blobs (blob);
