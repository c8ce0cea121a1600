//! What both history backends share: the SQL of every read, the checks and serialization
//! before a write, and the decoding of rows back into sessions, messages, events and
//! pending calls. The schema is the same on SQLite and Postgres, so only the write paths
//! (one writer task there, row locks here) differ.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use toolwire_core::{ErrorCode, Event, EventKind, Message, PendingCall, StoredAt, ToolResult};

use super::codec::{body_json, corrupt_row, from_row, role, validate_ids};
use super::{InlineBlob, NewSession, Session, StoredMessage, StoredResult};
use crate::error::{Result, StoreError};
use crate::ids::validate_id;
use crate::refs::message_blob_refs;

/// A session's columns, its counts of results and failures as kept by each append, and
/// its waiting calls counted from `suspensions` (by `suspensions_by_session`, a few rows
/// per session; only `pending` ones: a `resolving` one was answered, and a call asked a
/// second question has both), so a page of the list costs one indexed probe per session, not a scan
/// of its messages.
macro_rules! session_select {
    ($rest:literal) => {
        concat!(
            "SELECT id, parent_id, title, created_at, updated_at, last_seq, result_count, ",
            "error_count, (SELECT COUNT(*) FROM suspensions p ",
            "WHERE p.session_id = sessions.id AND p.state = 'pending') ",
            "FROM sessions ",
            $rest
        )
    };
}

pub(crate) const SELECT_SESSION: &str = session_select!("WHERE id = $1");
// A bound LIMIT or OFFSET is cast: SQLite reads a bare bound one as a constant of the
// plan, marks the statement to be prepared again whenever its value changes (~13,000
// instructions each time), and a cast one is read when the statement runs.
pub(crate) const LIST_SESSIONS: &str = session_select!(
    "ORDER BY updated_at DESC, id DESC LIMIT CAST($1 AS BIGINT) OFFSET CAST($2 AS BIGINT)"
);
pub(crate) const CHILD_SESSIONS: &str =
    session_select!("WHERE parent_id = $1 ORDER BY created_at, id");
pub(crate) const LOAD_MESSAGES: &str =
    "SELECT id, seq, role, body, created_at FROM messages WHERE session_id = $1 ORDER BY seq";
pub(crate) const LOAD_MESSAGES_PAGE: &str = "SELECT id, seq, role, body, created_at FROM messages \
     WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT CAST($3 AS BIGINT)";
pub(crate) const FIND_RESULT: &str = "SELECT id, session_id, seq, body, created_at FROM messages \
     WHERE session_id = $1 AND call_id = $2 AND role = $3 ORDER BY id DESC LIMIT 1";
pub(crate) const REFERENCED_BLOBS: &str = "SELECT DISTINCT blob FROM message_blobs";
pub(crate) const RESULT_WITH_BLOB: &str = "SELECT m.id, m.session_id, m.seq, m.body, m.created_at \
     FROM message_blobs b JOIN messages m ON m.id = b.message_id \
     WHERE b.blob = $1 AND m.session_id = $2 AND m.role = $3 ORDER BY m.id DESC LIMIT 1";
/// The results logged events refer to by their messages' rows: followed by `($3, $4, …)`,
/// one placeholder an id, at most [`RESULTS_AT_ONCE`] of them.
pub(crate) const RESULTS_BY_ID: &str = "SELECT id, session_id, seq, body, created_at FROM messages \
     WHERE session_id = $1 AND role = $2 AND id IN ";
/// Ids a [`RESULTS_BY_ID`] read takes at once: far under either database's bound on
/// parameters, and few enough distinct statements to keep prepared.
pub(crate) const RESULTS_AT_ONCE: usize = 64;
pub(crate) const EVENTS_SINCE: &str =
    "SELECT seq, body FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq";
pub(crate) const LAST_EVENT_SEQ: &str = "SELECT MAX(seq) FROM events WHERE session_id = $1";
pub(crate) const SUSPENSIONS: &str =
    "SELECT id, body, state FROM suspensions WHERE session_id = $1 ORDER BY created_at, id";
pub(crate) const PARENT_EXISTS: &str = "SELECT CAST(1 AS BIGINT) FROM sessions WHERE id = $1";
pub(crate) const INSERT_SESSION: &str = "INSERT INTO sessions (id, parent_id, title, created_at, updated_at, last_seq) \
     VALUES ($1, $2, $3, $4, $5, 0)";
/// Takes `$5` seqs (1 for one message; the SQLite writer takes a batch's at once) and
/// returns the last. `$3` and `$4` count the stored results and failed ones among them:
/// the counts change in the transaction that stores the messages.
pub(crate) const BUMP_SESSION: &str = "UPDATE sessions SET last_seq = last_seq + $5, updated_at = $2, \
     result_count = result_count + $3, error_count = error_count + $4 \
     WHERE id = $1 RETURNING last_seq";
pub(crate) const INSERT_MESSAGE: &str = "INSERT INTO messages (session_id, seq, role, call_id, body, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";
/// `$3` is the blob's bytes when the row keeps them (a small raw payload), else NULL.
pub(crate) const INSERT_MESSAGE_BLOB: &str = "INSERT INTO message_blobs (message_id, blob, bytes) \
     VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
/// A blob kept in a row rather than in the blob store, by its key (any row keeping it:
/// the bytes hash to the key, so every copy is the same).
pub(crate) const INLINE_BLOB: &str =
    "SELECT bytes FROM message_blobs WHERE blob = $1 AND bytes IS NOT NULL LIMIT 1";
/// The number is the session's last plus one, computed by the insert itself, under
/// SQLite's single write lock. (Postgres numbers its events in its writer's round
/// statement, colliding and trying again where two instances race.)
pub(crate) const INSERT_EVENT: &str = "INSERT INTO events (session_id, seq, body, created_at) \
     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3 FROM events WHERE session_id = $1 \
     RETURNING seq";
pub(crate) const PUT_SUSPENSION: &str = "INSERT INTO suspensions (id, session_id, body, created_at, state) \
     VALUES ($1, $2, $3, $4, 'pending') \
     ON CONFLICT (id) DO UPDATE SET body = excluded.body";
/// One statement, so two processes answering at once cannot both claim it.
pub(crate) const CLAIM_SUSPENSION: &str = "UPDATE suspensions SET state = 'resolving' \
     WHERE id = $1 AND state = 'pending' RETURNING body";
pub(crate) const FINISH_SUSPENSION: &str = "DELETE FROM suspensions WHERE id = $1";

/// The session and its descendants (subagent sessions), as a static statement.
macro_rules! in_tree {
    ($stmt:literal) => {
        concat!(
            "WITH RECURSIVE tree(id) AS (SELECT CAST($1 AS TEXT) UNION ALL ",
            "SELECT s.id FROM sessions s JOIN tree ON s.parent_id = tree.id) ",
            $stmt
        )
    };
}

/// A session's delete, in order (children rows before the rows they reference); run in
/// one transaction. The last statement's row count says whether the session existed.
pub(crate) const DELETE_SESSION: [&str; 5] = [
    in_tree!(
        "DELETE FROM message_blobs WHERE message_id IN \
         (SELECT id FROM messages WHERE session_id IN (SELECT id FROM tree))"
    ),
    in_tree!("DELETE FROM messages WHERE session_id IN (SELECT id FROM tree)"),
    in_tree!("DELETE FROM events WHERE session_id IN (SELECT id FROM tree)"),
    in_tree!("DELETE FROM suspensions WHERE session_id IN (SELECT id FROM tree)"),
    in_tree!("DELETE FROM sessions WHERE id IN (SELECT id FROM tree)"),
];

pub(crate) const STATE_RESOLVING: &str = "resolving";

/// A migrator over embedded `(version, name, sql)` steps: no migrations directory is
/// needed at run time.
pub(crate) fn migrator(steps: &[(i64, &str, &'static str)]) -> sqlx::migrate::Migrator {
    use sqlx::SqlSafeStr;
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    Migrator::with_migrations(
        steps
            .iter()
            .map(|&(version, name, sql)| {
                Migration::new(
                    version,
                    name.to_owned().into(),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    )
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

pub(crate) type SessionRow = (
    String,
    Option<String>,
    Option<String>,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
);
pub(crate) type MessageRow = (i64, i64, String, String, i64);
pub(crate) type ResultRow = (i64, String, i64, String, i64);

pub(crate) fn session_from_row(row: SessionRow) -> Session {
    let (
        id,
        parent_id,
        title,
        created_at_ms,
        updated_at_ms,
        message_count,
        results,
        errors,
        waiting,
    ) = row;
    Session {
        id,
        parent_id,
        title,
        created_at_ms,
        updated_at_ms,
        message_count,
        // A call is counted once: by its stored result, or while it waits for a person
        // (a waiting call's result is stored only once it is answered).
        call_count: results + waiting,
        pending_count: waiting,
        error_count: errors,
    }
}

/// The session to insert, its ids checked (generated when not given).
pub(crate) fn new_session(new: NewSession) -> Result<Session> {
    let id = match new.id {
        Some(id) => {
            validate_id("session id", &id)?;
            id
        }
        None => toolwire_core::new_id("s"),
    };
    if let Some(parent) = &new.parent_id {
        validate_id("parent session id", parent)?;
    }
    let now = now_ms();
    Ok(Session {
        id,
        parent_id: new.parent_id,
        title: new.title,
        created_at_ms: now,
        updated_at_ms: now,
        message_count: 0,
        call_count: 0,
        pending_count: 0,
        error_count: 0,
    })
}

/// An append, checked and serialized on the caller's task so the write path only writes.
#[derive(Debug)]
pub(crate) struct NewRow {
    pub session_id: String,
    pub role: &'static str,
    pub call_id: Option<String>,
    pub body: String,
    pub blobs: BTreeSet<String>,
    /// The bytes of those of `blobs` this row keeps itself (see [`InlineBlob`]).
    pub inline: BTreeMap<String, Vec<u8>>,
    pub now: i64,
    /// What the row adds to the session's counts: 1 for a tool result (`results`) and
    /// for a failed one (`errors`), else 0. A cancelled call (stopped or dismissed by a
    /// person, an error whose code is `cancelled`) is no failure.
    pub results: i64,
    pub errors: i64,
}

pub(crate) fn new_rows(session_id: &str, contents: &[Message], now: i64) -> Result<Vec<NewRow>> {
    validate_id("session id", session_id)?;
    contents
        .iter()
        .map(|content| {
            validate_ids(content)?;
            let (results, errors) = match content {
                Message::ToolResult(r) => (
                    1,
                    i64::from(r.is_error() && r.error_code() != Some(ErrorCode::Cancelled)),
                ),
                _ => (0, 0),
            };
            Ok(NewRow {
                session_id: session_id.to_owned(),
                role: role(content),
                call_id: content.call_id().map(str::to_owned),
                body: body_json(content)?,
                blobs: message_blob_refs(content),
                inline: BTreeMap::new(),
                now,
                results,
                errors,
            })
        })
        .collect()
}

/// Gives each row that references one of `inline`'s keys that blob's bytes, so the row
/// keeps them (every such row: a copy in each, so deleting one session loses none).
pub(crate) fn keep_inline(rows: &mut [NewRow], inline: &[InlineBlob]) {
    for blob in inline {
        for row in rows.iter_mut() {
            if row.blobs.contains(blob.key.as_str()) {
                row.inline.insert(blob.key.to_string(), blob.bytes.to_vec());
            }
        }
    }
}

/// The appended messages, given the (id, seq) each row got.
pub(crate) fn stored_messages(
    session_id: &str,
    contents: Vec<Message>,
    ids: Vec<(i64, i64)>,
    now: i64,
) -> Vec<StoredMessage> {
    contents
        .into_iter()
        .zip(ids)
        .map(|(content, (id, seq))| StoredMessage {
            id,
            session_id: session_id.to_owned(),
            seq,
            created_at_ms: now,
            content,
        })
        .collect()
}

/// Rows as they are, with the cheap checks that keep a damaged row from reaching a
/// reader as broken JSON inside a valid-looking response: a known role and a body that is
/// one JSON object's outline. (Full parsing is what [`messages_from_rows`] does.)
pub(crate) fn raw_messages_from_rows(
    session_id: &str,
    rows: Vec<MessageRow>,
) -> Result<Vec<crate::history::RawStoredMessage>> {
    rows.into_iter()
        .map(|(id, seq, role, body, created_at_ms)| {
            if !super::codec::known_role(&role) {
                return Err(corrupt_row(
                    session_id,
                    seq,
                    format!("unknown role {role:?}"),
                ));
            }
            let trimmed = body.trim();
            if !(trimmed.starts_with('{') && trimmed.ends_with('}')) {
                return Err(corrupt_row(
                    session_id,
                    seq,
                    "the body is not a JSON object".into(),
                ));
            }
            Ok(crate::history::RawStoredMessage {
                id,
                seq,
                created_at_ms,
                role,
                body,
            })
        })
        .collect()
}

pub(crate) fn messages_from_rows(
    session_id: &str,
    rows: Vec<MessageRow>,
) -> Result<Vec<StoredMessage>> {
    rows.into_iter()
        .map(|(id, seq, role, body, created_at_ms)| {
            let content = from_row(&role, &body).map_err(|m| corrupt_row(session_id, seq, m))?;
            Ok(StoredMessage {
                id,
                session_id: session_id.to_owned(),
                seq,
                created_at_ms,
                content,
            })
        })
        .collect()
}

pub(crate) fn result_from_row(row: Option<ResultRow>) -> Result<Option<StoredResult>> {
    let Some((message_id, session_id, seq, body, created_at_ms)) = row else {
        return Ok(None);
    };
    let result =
        serde_json::from_str(&body).map_err(|e| corrupt_row(&session_id, seq, e.to_string()))?;
    Ok(Some(StoredResult {
        message_id,
        session_id,
        seq,
        created_at_ms,
        result,
    }))
}

/// A `tool_result` event whose body would be longer than this is logged as a reference to
/// the result the history already holds (it is announced only once stored): the log does
/// not hold a large result a second time, and the write that logs it stays small (a 48 MiB
/// text logged whole made SQLite hold both rows at once). Readers of the log get the event
/// whole again, its result read back from the history; the payload as received (`raw`) is
/// not kept in the reference (the history keeps it by `raw_ref`).
pub(crate) const EVENT_INLINE_MAX: usize = 1 << 20;

/// The body of a logged reference to a stored result. Its one key comes first in the
/// body, so a reader tells it from an event by its first bytes.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredResultRef {
    stored_result: ResultRef,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultRef {
    call_id: String,
    at: String,
    /// The row of the message that holds the result, when the landing that stored it said
    /// which. References written before it (and those of a result logged past
    /// [`EVENT_INLINE_MAX`] without it) name only the call, whose latest result they read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message_id: Option<i64>,
}

const STORED_RESULT_PREFIX: &str = "{\"storedResult\":";

/// The logged body of the event that announces a stored result, `call_id`'s, before its
/// row has an id: what [`naming_row`] (or the SQLite writer's one-shot list, in SQL)
/// completes as the row is written in the same commit.
pub(crate) fn unnamed_reference(call_id: &str, at: &str) -> Result<String> {
    Ok(serde_json::to_string(&StoredResultRef {
        stored_result: ResultRef {
            call_id: call_id.to_owned(),
            at: at.to_owned(),
            message_id: None,
        },
    })?)
}

/// A result to append with the event that announces it (`HistoryStore::append_announced`),
/// made ready for a writer ([`Announced::new`] also gives its row and the event's body,
/// still naming no row): what [`Announced::stored`] turns the writer's answers into.
pub(crate) struct Announced {
    pub now: i64,
    contents: Vec<Message>,
    session_id: String,
}

impl Announced {
    /// The result's rows, the event's body, and this.
    pub(crate) fn new(
        session_id: &str,
        result: ToolResult,
        inline: &[InlineBlob],
        at: &str,
    ) -> Result<(Vec<NewRow>, String, Self)> {
        let now = now_ms();
        let body = unnamed_reference(&result.call_id, at)?;
        let contents = vec![Message::ToolResult(result)];
        let mut rows = new_rows(session_id, &contents, now)?;
        keep_inline(&mut rows, inline);
        let announced = Announced {
            now,
            contents,
            session_id: session_id.to_owned(),
        };
        Ok((rows, body, announced))
    }

    /// The stored message from its row's `(id, seq)`, beside the event's number (`None`
    /// when the event was not logged: the result is stored all the same, events being
    /// advisory).
    pub(crate) fn stored(
        self,
        ids: Vec<(i64, i64)>,
        seq: Option<i64>,
    ) -> Result<(StoredMessage, Option<u64>)> {
        let mut stored = stored_messages(&self.session_id, self.contents, ids, self.now);
        let seq = seq.and_then(|seq| u64::try_from(seq).ok());
        Ok((stored.pop().ok_or(StoreError::WriterGone)?, seq))
    }
}

/// `body`, an [`unnamed_reference`], naming the row `message_id`.
pub(crate) fn naming_row(body: &str, message_id: i64) -> Result<String> {
    let mut reference: StoredResultRef = serde_json::from_str(body)?;
    reference.stored_result.message_id = Some(message_id);
    Ok(serde_json::to_string(&reference)?)
}

/// A new event with a placeholder number, and its body; the store assigns the number.
pub(crate) fn new_event(session_id: &str, at: String, kind: EventKind) -> Result<(Event, String)> {
    validate_id("session id", session_id)?;
    let event = Event {
        session_id: session_id.to_owned(),
        seq: 0,
        at,
        kind,
    };
    let EventKind::ToolResult {
        result,
        raw,
        stored,
    } = &event.kind
    else {
        let body = serde_json::to_string(&event)?;
        return Ok((event, body));
    };
    let reference = |message_id| {
        serde_json::to_string(&StoredResultRef {
            stored_result: ResultRef {
                call_id: result.call_id.clone(),
                at: event.at.clone(),
                message_id,
            },
        })
    };
    // A result the history holds (its landing says which message): logged once, there,
    // whatever its size. One announced with its payload as received is logged whole
    // (within the bound), as only the log keeps that.
    if let (StoredAt(Some(message_id)), None) = (stored, raw) {
        let body = reference(Some(*message_id))?;
        return Ok((event, body));
    }
    // Written into a buffer that refuses to pass the bound, so a large result is not
    // serialized whole only to be replaced by its reference.
    let mut bounded = Bounded(Vec::new());
    let body = match serde_json::to_writer(&mut bounded, &event) {
        // serde_json writes UTF-8 only: the lossy branch is never taken.
        Ok(()) => String::from_utf8(bounded.0)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        Err(e) if e.is_io() => reference(None)?,
        Err(e) => return Err(e.into()),
    };
    Ok((event, body))
}

/// A buffer that takes at most [`EVENT_INLINE_MAX`] bytes; past that every write fails.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + bytes.len() > EVENT_INLINE_MAX {
            return Err(std::io::Error::other(
                "past the bound of an event logged whole",
            ));
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A logged event as read: whole, or a reference to a stored result still to be read.
pub(crate) enum LoggedEvent {
    Whole(Event),
    StoredResult {
        seq: u64,
        at: String,
        call_id: String,
        message_id: Option<i64>,
    },
}

pub(crate) fn events_from_rows(
    session_id: &str,
    rows: Vec<(i64, String)>,
) -> Result<Vec<LoggedEvent>> {
    rows.into_iter()
        .map(|(seq, body)| {
            let corrupt = |e: serde_json::Error| StoreError::CorruptEvent {
                session_id: session_id.to_owned(),
                seq,
                message: e.to_string(),
            };
            // The row's number is the truth; the body's is the placeholder it was
            // written with.
            let number = u64::try_from(seq).unwrap_or_default();
            if body.starts_with(STORED_RESULT_PREFIX) {
                let StoredResultRef { stored_result } =
                    serde_json::from_str(&body).map_err(corrupt)?;
                return Ok(LoggedEvent::StoredResult {
                    seq: number,
                    at: stored_result.at,
                    call_id: stored_result.call_id,
                    message_id: stored_result.message_id,
                });
            }
            let mut event: Event = serde_json::from_str(&body).map_err(corrupt)?;
            event.seq = number;
            Ok(LoggedEvent::Whole(event))
        })
        .collect()
}

impl LoggedEvent {
    /// The row of the message a reference names, when it names one.
    pub(crate) fn message_id(&self) -> Option<i64> {
        match self {
            LoggedEvent::StoredResult { message_id, .. } => *message_id,
            LoggedEvent::Whole(_) => None,
        }
    }
}

/// The results a read of the log found for its references, each handed out as often as
/// references name it (once, but a result named twice is not lost to the second).
pub(crate) struct Held {
    /// How many references name each row, then how many are still to be answered.
    named: std::collections::HashMap<i64, usize>,
    found: std::collections::HashMap<i64, StoredResult>,
}

impl Held {
    /// For references naming `ids`, in the log's order (repeats and all).
    pub(crate) fn new(ids: &[i64]) -> Self {
        let mut named = std::collections::HashMap::with_capacity(ids.len());
        for id in ids {
            *named.entry(*id).or_insert(0) += 1;
        }
        Held {
            named,
            found: std::collections::HashMap::with_capacity(ids.len()),
        }
    }

    /// The distinct rows to read.
    pub(crate) fn rows(&self) -> Vec<i64> {
        self.named.keys().copied().collect()
    }

    /// A result read back for the references.
    pub(crate) fn insert(&mut self, stored: StoredResult) {
        self.found.insert(stored.message_id, stored);
    }

    /// The result for the next reference to `id`: a copy while more references name it,
    /// the result itself for the last; `None` when the session holds no such result.
    pub(crate) fn take(&mut self, id: i64) -> Option<StoredResult> {
        let left = self.named.get_mut(&id)?;
        *left = left.saturating_sub(1);
        if *left > 0 {
            return self.found.get(&id).cloned();
        }
        self.found.remove(&id)
    }
}

/// [`RESULTS_BY_ID`] for `ids` ids (1 ..= [`RESULTS_AT_ONCE`]), made once: placeholders
/// only, never a value, so each is as safe as a literal.
pub(crate) fn results_by_id(ids: usize) -> &'static str {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let texts = TEXTS.get_or_init(|| {
        (1..=RESULTS_AT_ONCE)
            .map(|n| {
                let places: Vec<String> = (0..n).map(|i| format!("${}", i + 3)).collect();
                format!("{RESULTS_BY_ID}({})", places.join(", "))
            })
            .collect()
    });
    let at = ids.clamp(1, RESULTS_AT_ONCE) - 1;
    texts.get(at).map_or(RESULTS_BY_ID, String::as_str)
}

/// The event a logged reference stands for, its result as the history holds it.
pub(crate) fn stored_result_event(
    session_id: &str,
    seq: u64,
    at: String,
    stored: Option<StoredResult>,
) -> Result<Event> {
    let Some(stored) = stored else {
        return Err(StoreError::CorruptEvent {
            session_id: session_id.to_owned(),
            seq: i64::try_from(seq).unwrap_or(i64::MAX),
            message: "the stored result it refers to is not in the history".to_owned(),
        });
    };
    Ok(Event {
        session_id: session_id.to_owned(),
        seq,
        at,
        // With the row it was read from: logged again in this store it is a reference
        // again; `toolwire migrate`, which logs it in another, names that store's row.
        kind: EventKind::ToolResult {
            stored: StoredAt(Some(stored.message_id)),
            result: std::sync::Arc::new(stored.result),
            raw: None,
        },
    })
}

pub(crate) fn after_bound(after: u64) -> i64 {
    i64::try_from(after).unwrap_or(i64::MAX)
}

pub(crate) fn last_seq(max: Option<i64>) -> u64 {
    max.and_then(|s| u64::try_from(s).ok()).unwrap_or(0)
}

/// `(session, max seq)` rows as each of `session_ids`' last event number, in their order;
/// 0 for a session with no row (no events).
pub(crate) fn in_order(session_ids: &[String], found: Vec<(String, i64)>) -> Vec<u64> {
    let found: std::collections::HashMap<String, i64> = found.into_iter().collect();
    session_ids
        .iter()
        .map(|id| last_seq(found.get(id).copied()))
        .collect()
}

/// A pending call's id, session and body, checked.
pub(crate) fn suspension_row(pending: &PendingCall) -> Result<(String, String, String)> {
    validate_id("suspension id", &pending.suspension.id)?;
    validate_id("session id", &pending.session_id)?;
    Ok((
        pending.suspension.id.clone(),
        pending.session_id.clone(),
        serde_json::to_string(pending)?,
    ))
}

pub(crate) fn pending_from_row(id: &str, body: &str, state: &str) -> Result<PendingCall> {
    let mut pending: PendingCall =
        serde_json::from_str(body).map_err(|e| StoreError::CorruptSuspension {
            id: id.to_owned(),
            message: e.to_string(),
        })?;
    pending.resolving = state == STATE_RESOLVING;
    Ok(pending)
}

pub(crate) fn pendings_from_rows(rows: &[(String, String, String)]) -> Result<Vec<PendingCall>> {
    rows.iter()
        .map(|(id, body, state)| pending_from_row(id, body, state))
        .collect()
}

/// A key that fails to parse was never written by us; skipping it cannot lose data
/// because gc only deletes blobs it lists from the store itself.
pub(crate) fn blob_keys(rows: Vec<(String,)>) -> BTreeSet<crate::ids::BlobKey> {
    rows.into_iter()
        .filter_map(|(k,)| crate::ids::BlobKey::parse(&k).ok())
        .collect()
}

/// The statements both backends run, as functions over one backend's connection (writes)
/// and pool (reads). A macro rather than generics over `sqlx::Database`: the bounds for
/// binding and decoding each column would outweigh the code they save.
macro_rules! statements {
    ($conn:ty, $pool:ty) => {
        use $crate::history::rows as sql;

        async fn create(conn: &mut $conn, s: &Session) -> Result<()> {
            if let Some(parent) = &s.parent_id {
                let found: Option<(i64,)> = sqlx::query_as(sql::PARENT_EXISTS)
                    .bind(parent)
                    .fetch_optional(&mut *conn)
                    .await?;
                if found.is_none() {
                    return Err(StoreError::ParentNotFound { id: parent.clone() });
                }
            }
            let inserted = sqlx::query(sql::INSERT_SESSION)
                .bind(&s.id)
                .bind(&s.parent_id)
                .bind(&s.title)
                .bind(s.created_at_ms)
                .bind(s.updated_at_ms)
                .execute(&mut *conn)
                .await;
            match inserted {
                Ok(_) => Ok(()),
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                    Err(StoreError::SessionExists { id: s.id.clone() })
                }
                Err(e) => Err(e.into()),
            }
        }

        async fn put_suspension_row(
            conn: &mut $conn,
            (id, session_id, body): (String, String, String),
            now: i64,
        ) -> Result<()> {
            sqlx::query(sql::PUT_SUSPENSION)
                .bind(id)
                .bind(session_id)
                .bind(body)
                .bind(now)
                .execute(&mut *conn)
                .await?;
            Ok(())
        }

        /// The claimed call's body, or `None` when it was not pending.
        async fn claim_suspension_row(conn: &mut $conn, id: &str) -> Result<Option<String>> {
            let row: Option<(String,)> = sqlx::query_as(sql::CLAIM_SUSPENSION)
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
            Ok(row.map(|(body,)| body))
        }

        async fn finish_suspension_row(conn: &mut $conn, id: &str) -> Result<()> {
            sqlx::query(sql::FINISH_SUSPENSION)
                .bind(id)
                .execute(&mut *conn)
                .await?;
            Ok(())
        }

        /// Run inside one transaction, so a delete is all or nothing; blobs stay for `gc`.
        /// Returns how many sessions went.
        async fn delete_tree(conn: &mut $conn, id: &str) -> Result<u64> {
            let mut found = 0;
            for stmt in sql::DELETE_SESSION {
                found = sqlx::query(stmt)
                    .bind(id)
                    .execute(&mut *conn)
                    .await?
                    .rows_affected();
            }
            Ok(found)
        }

        async fn read_session(pool: &$pool, id: &str) -> Result<Option<Session>> {
            $crate::ids::validate_id("session id", id)?;
            let row: Option<sql::SessionRow> = sqlx::query_as(sql::SELECT_SESSION)
                .bind(id)
                .fetch_optional(pool)
                .await?;
            Ok(row.map(sql::session_from_row))
        }

        async fn read_sessions(pool: &$pool, page: Page) -> Result<Vec<Session>> {
            let found: Vec<sql::SessionRow> = sqlx::query_as(sql::LIST_SESSIONS)
                .bind(i64::from(page.limit))
                .bind(i64::from(page.offset))
                .fetch_all(pool)
                .await?;
            Ok(found.into_iter().map(sql::session_from_row).collect())
        }

        async fn read_children(pool: &$pool, parent_id: &str) -> Result<Vec<Session>> {
            $crate::ids::validate_id("session id", parent_id)?;
            let found: Vec<sql::SessionRow> = sqlx::query_as(sql::CHILD_SESSIONS)
                .bind(parent_id)
                .fetch_all(pool)
                .await?;
            Ok(found.into_iter().map(sql::session_from_row).collect())
        }

        /// A session's message rows in order (those of `page` only: after this seq, at
        /// most this many); errs when there is no such session.
        async fn message_rows(
            pool: &$pool,
            session_id: &str,
            page: Option<(i64, i64)>,
        ) -> Result<Vec<sql::MessageRow>> {
            $crate::ids::validate_id("session id", session_id)?;
            let found: Vec<sql::MessageRow> = match page {
                None => sqlx::query_as(sql::LOAD_MESSAGES).bind(session_id),
                Some((after, limit)) => sqlx::query_as(sql::LOAD_MESSAGES_PAGE)
                    .bind(session_id)
                    .bind(after)
                    .bind(limit),
            }
            .fetch_all(pool)
            .await?;
            if found.is_empty() && read_session(pool, session_id).await?.is_none() {
                return Err(StoreError::SessionNotFound {
                    id: session_id.to_owned(),
                });
            }
            Ok(found)
        }

        async fn read_messages(pool: &$pool, session_id: &str) -> Result<Vec<StoredMessage>> {
            sql::messages_from_rows(session_id, message_rows(pool, session_id, None).await?)
        }

        async fn read_messages_raw(
            pool: &$pool,
            session_id: &str,
            page: Option<$crate::history::MessagePage>,
        ) -> Result<Vec<$crate::history::RawStoredMessage>> {
            let page = page.map(|p| (p.after_seq, i64::from(p.limit)));
            sql::raw_messages_from_rows(session_id, message_rows(pool, session_id, page).await?)
        }

        async fn read_result(
            pool: &$pool,
            session_id: &str,
            call_id: &str,
        ) -> Result<Option<StoredResult>> {
            $crate::ids::validate_id("session id", session_id)?;
            $crate::ids::validate_id("call id", call_id)?;
            let row: Option<sql::ResultRow> = sqlx::query_as(sql::FIND_RESULT)
                .bind(session_id)
                .bind(call_id)
                .bind($crate::history::codec::ROLE_TOOL_RESULT)
                .fetch_optional(pool)
                .await?;
            sql::result_from_row(row)
        }

        async fn read_result_with_blob(
            pool: &$pool,
            session_id: &str,
            key: &BlobKey,
        ) -> Result<Option<StoredResult>> {
            $crate::ids::validate_id("session id", session_id)?;
            let row: Option<sql::ResultRow> = sqlx::query_as(sql::RESULT_WITH_BLOB)
                .bind(key.as_str())
                .bind(session_id)
                .bind($crate::history::codec::ROLE_TOOL_RESULT)
                .fetch_optional(pool)
                .await?;
            sql::result_from_row(row)
        }

        async fn read_inline_blob(pool: &$pool, key: &BlobKey) -> Result<Option<bytes::Bytes>> {
            let row: Option<(Vec<u8>,)> = sqlx::query_as(sql::INLINE_BLOB)
                .bind(key.as_str())
                .fetch_optional(pool)
                .await?;
            Ok(row.map(|(bytes,)| bytes::Bytes::from(bytes)))
        }

        async fn read_blob_refs(pool: &$pool) -> Result<BTreeSet<BlobKey>> {
            let found: Vec<(String,)> = sqlx::query_as(sql::REFERENCED_BLOBS)
                .fetch_all(pool)
                .await?;
            Ok(sql::blob_keys(found))
        }

        async fn read_events(pool: &$pool, session_id: &str, after: u64) -> Result<Vec<Event>> {
            $crate::ids::validate_id("session id", session_id)?;
            let found: Vec<(i64, String)> = sqlx::query_as(sql::EVENTS_SINCE)
                .bind(session_id)
                .bind(sql::after_bound(after))
                .fetch_all(pool)
                .await?;
            let logged = sql::events_from_rows(session_id, found)?;
            // The results referred to by their rows, read a batch of ids at a time rather
            // than a round trip an event.
            let ids: Vec<i64> = logged
                .iter()
                .filter_map(sql::LoggedEvent::message_id)
                .collect();
            let mut held = sql::Held::new(&ids);
            for batch in held.rows().chunks(sql::RESULTS_AT_ONCE) {
                let text = sql::results_by_id(batch.len());
                let mut query = sqlx::query_as::<_, sql::ResultRow>(text)
                    .bind(session_id)
                    .bind($crate::history::codec::ROLE_TOOL_RESULT);
                for id in batch {
                    query = query.bind(*id);
                }
                for row in query.fetch_all(pool).await? {
                    if let Some(stored) = sql::result_from_row(Some(row))? {
                        held.insert(stored);
                    }
                }
            }
            let mut events = Vec::with_capacity(logged.len());
            for logged in logged {
                events.push(match logged {
                    sql::LoggedEvent::Whole(event) => event,
                    sql::LoggedEvent::StoredResult {
                        seq,
                        at,
                        message_id: Some(id),
                        ..
                    } => sql::stored_result_event(session_id, seq, at, held.take(id))?,
                    sql::LoggedEvent::StoredResult {
                        seq,
                        at,
                        call_id,
                        message_id: None,
                    } => {
                        let stored = read_result(pool, session_id, &call_id).await?;
                        sql::stored_result_event(session_id, seq, at, stored)?
                    }
                });
            }
            Ok(events)
        }

        async fn read_last_event(pool: &$pool, session_id: &str) -> Result<u64> {
            $crate::ids::validate_id("session id", session_id)?;
            let row: (Option<i64>,) = sqlx::query_as(sql::LAST_EVENT_SEQ)
                .bind(session_id)
                .fetch_one(pool)
                .await?;
            Ok(sql::last_seq(row.0))
        }

        async fn read_suspensions(pool: &$pool, session_id: &str) -> Result<Vec<PendingCall>> {
            $crate::ids::validate_id("session id", session_id)?;
            let found: Vec<(String, String, String)> = sqlx::query_as(sql::SUSPENSIONS)
                .bind(session_id)
                .fetch_all(pool)
                .await?;
            sql::pendings_from_rows(&found)
        }
    };
}
pub(crate) use statements;
