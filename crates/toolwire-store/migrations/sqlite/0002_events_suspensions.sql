-- Runtime events (resumable per-session streams) and pending suspended calls.
-- Bodies are the runtime's canonical JSON; the store does not interpret them.

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
    created_at    BIGINT NOT NULL
);

CREATE INDEX suspensions_by_session ON suspensions (session_id, created_at);
