-- toolwire history schema on Postgres: the same tables and columns as the SQLite
-- migrations 0001–0003 together, so every statement in src/history/rows.rs runs on both.
-- Only `messages.id` differs (an identity column instead of SQLite's rowid alias).

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    parent_id     TEXT REFERENCES sessions (id),
    title         TEXT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    -- The seq of the newest message; bumped (under the row's lock) by each append.
    last_seq      BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX sessions_by_parent ON sessions (parent_id);
CREATE INDEX sessions_by_update ON sessions (updated_at, id);

CREATE TABLE messages (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    seq           BIGINT NOT NULL,
    role          TEXT NOT NULL,
    call_id       TEXT,
    -- Canonical JSON: for a tool result, exactly serde_json's text of the ToolResult.
    -- TEXT, not JSONB, so a load returns the stored bytes unchanged.
    body          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    UNIQUE (session_id, seq)
);

CREATE INDEX messages_by_call ON messages (call_id);

CREATE TABLE message_blobs (
    message_id    BIGINT NOT NULL REFERENCES messages (id),
    blob          TEXT NOT NULL,
    PRIMARY KEY (message_id, blob)
);

CREATE INDEX message_blobs_by_blob ON message_blobs (blob);

CREATE TABLE events (
    session_id    TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    body          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE suspensions (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    state         TEXT NOT NULL DEFAULT 'pending'
);

CREATE INDEX suspensions_by_session ON suspensions (session_id, created_at);
