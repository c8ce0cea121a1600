//! The history traits: [`HistoryStore`] (sessions and their ordered messages, every tool
//! result included), [`EventLog`] (numbered events) and [`SuspensionStore`] (calls
//! waiting for a person). One database backs all three.

// The row encoding; without the SQL backends only the default `load_raw` uses it.
#[cfg_attr(not(feature = "backends"), allow(dead_code))]
mod codec;
mod model;
#[cfg(feature = "backends")]
mod postgres;
#[cfg(feature = "backends")]
mod rows;
#[cfg(feature = "backends")]
mod sqlite;

use std::collections::BTreeSet;
use std::fmt;

use async_trait::async_trait;
use toolwire_core::{Event, EventKind, Message, PendingCall, ToolResult};

use crate::error::Result;
use crate::ids::BlobKey;

pub use model::{MessagePage, NewSession, Page, RawStoredMessage, Session, StoredMessage};
#[cfg(feature = "backends")]
pub use postgres::{EVENTS_CHANNEL, PgHistory};
#[cfg(feature = "backends")]
pub use sqlite::SqliteHistory;

/// A stored tool result found by its call id.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResult {
    /// The row id of the message holding the result.
    pub message_id: i64,
    /// The session it belongs to.
    pub session_id: String,
    /// Its position in the session.
    pub seq: i64,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// The result.
    pub result: ToolResult,
}

impl StoredResult {
    /// A stored message as the result it holds; `None` for any other message.
    pub fn from_message(message: StoredMessage) -> Option<StoredResult> {
        match message.content {
            Message::ToolResult(result) => Some(StoredResult {
                message_id: message.id,
                session_id: message.session_id,
                seq: message.seq,
                created_at_ms: message.created_at_ms,
                result,
            }),
            _ => None,
        }
    }
}

impl From<StoredResult> for StoredMessage {
    fn from(stored: StoredResult) -> Self {
        StoredMessage {
            id: stored.message_id,
            session_id: stored.session_id,
            seq: stored.seq,
            created_at_ms: stored.created_at_ms,
            content: Message::ToolResult(stored.result),
        }
    }
}

/// The read side of the session history: what a viewer, a search or a `read_result` tool
/// needs. [`Stores::history`](crate::Stores) hands out only this, so the one checked
/// write path (`Stores::append`, which refuses a message whose blobs are missing) cannot
/// be skipped by accident.
#[async_trait]
pub trait HistoryReader: Send + Sync + fmt::Debug {
    /// The session with this id, if any.
    async fn session(&self, id: &str) -> Result<Option<Session>>;

    /// Sessions, most recently updated first.
    async fn list_sessions(&self, page: Page) -> Result<Vec<Session>>;

    /// Sessions whose parent is `parent_id` (subagents), oldest first.
    async fn child_sessions(&self, parent_id: &str) -> Result<Vec<Session>>;

    /// Every message of a session, in order.
    async fn load(&self, session_id: &str) -> Result<Vec<StoredMessage>>;

    /// Every message of a session, in order, as stored JSON that is not parsed again: for
    /// readers that pass messages on. The SQL backends read the rows as they are; this
    /// default serializes what [`HistoryReader::load`] returns.
    async fn load_raw(&self, session_id: &str) -> Result<Vec<RawStoredMessage>> {
        self.load(session_id)
            .await?
            .iter()
            .map(|m| {
                Ok(RawStoredMessage {
                    id: m.id,
                    seq: m.seq,
                    created_at_ms: m.created_at_ms,
                    role: codec::role(&m.content).to_owned(),
                    body: codec::body_json(&m.content)?,
                })
            })
            .collect()
    }

    /// A page of a session's messages as stored JSON ([`HistoryReader::load_raw`]): those
    /// after `page.after_seq`, in order, at most `page.limit`. A long session's viewer
    /// shows its first screen from the first page and reads the rest after. The SQL
    /// backends read only those rows; this default pages what `load_raw` returns.
    async fn load_raw_page(
        &self,
        session_id: &str,
        page: MessagePage,
    ) -> Result<Vec<RawStoredMessage>> {
        let mut all = self.load_raw(session_id).await?;
        all.retain(|m| m.seq > page.after_seq);
        all.truncate(usize::try_from(page.limit).unwrap_or(usize::MAX));
        Ok(all)
    }

    /// The newest stored result of call `call_id` in session `session_id`. A call id names
    /// a call within its session only: providers and agents repeat ids across sessions,
    /// so no lookup by call id alone exists (one session must not read another's result).
    async fn find_result(&self, session_id: &str, call_id: &str) -> Result<Option<StoredResult>>;

    /// The newest stored result of session `session_id` that references blob `key`: what
    /// the blob is (its media type, its name) to a reader that has only its key, and
    /// whether that session may read it at all (blob keys are content hashes, so an
    /// unscoped answer would tell anyone whether a known file is stored anywhere).
    async fn result_with_blob(
        &self,
        session_id: &str,
        key: &BlobKey,
    ) -> Result<Option<StoredResult>>;

    /// Every blob some stored message references.
    async fn referenced_blobs(&self) -> Result<BTreeSet<BlobKey>>;

    /// A blob a stored row keeps itself ([`HistoryStore::append_many_inline`]), by key;
    /// `None` when no row keeps it (it is in the blob store, or nowhere).
    async fn inline_blob(&self, _key: &BlobKey) -> Result<Option<bytes::Bytes>> {
        Ok(None)
    }
}

/// A small blob stored in the history row that references it rather than in the blob
/// store: committed in the row's transaction, so it costs no file, no fsync and no
/// object of its own, and is deleted with its session. For a tool's raw payload, kept
/// beside every result (`metadata.rawRef`). Its key is the BLAKE3 hash of its bytes, as
/// in the blob store, so a reader cannot tell where it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineBlob {
    /// The content address of `bytes`.
    pub key: BlobKey,
    /// The blob.
    pub bytes: bytes::Bytes,
}

/// Durable, ordered session history. Implementations: SQLite and Postgres; both
/// store a tool result as its canonical JSON text, so a load returns the same bytes.
/// The write methods do not check blob references; hosts write through
/// `Stores`, which does.
#[async_trait]
pub trait HistoryStore: HistoryReader {
    /// Creates a session; the id is generated when `new.id` is `None`.
    async fn create_session(&self, new: NewSession) -> Result<Session>;

    /// Appends a message. When this returns `Ok`, the message is on disk.
    async fn append(&self, session_id: &str, content: Message) -> Result<StoredMessage> {
        let mut appended = self.append_many(session_id, vec![content]).await?;
        appended.pop().ok_or(crate::error::StoreError::WriterGone)
    }

    /// Appends several messages atomically: all are stored, in order, or none.
    async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<Message>,
    ) -> Result<Vec<StoredMessage>>;

    /// Deletes a session with its subagents' sessions, messages, events and pending
    /// calls; `false` when there was none. Blobs stay until `gc` finds them unreferenced.
    async fn delete_session(&self, id: &str) -> Result<bool>;

    /// Whether [`HistoryStore::append_many_inline`] keeps blobs in rows. A store that
    /// does not (a wrapper, a test double) is given every blob through the blob store.
    fn keeps_inline_blobs(&self) -> bool {
        false
    }

    /// [`HistoryStore::append_many`], each row that references one of `inline`'s keys
    /// keeping that blob's bytes, in the same transaction.
    async fn append_many_inline(
        &self,
        session_id: &str,
        contents: Vec<Message>,
        inline: Vec<InlineBlob>,
    ) -> Result<Vec<StoredMessage>> {
        if inline.is_empty() {
            return self.append_many(session_id, contents).await;
        }
        Err(crate::error::StoreError::CommitFailed {
            message: "this history does not keep blobs in its rows".into(),
        })
    }

    /// Whether [`HistoryStore::append_announced`] writes a result and its event together
    /// here: a store that is its own event log and can. Callers that get `false` append
    /// the result and log its event apart.
    fn announces_appends(&self) -> bool {
        false
    }

    /// Appends `result`'s message (each row referencing one of `inline`'s keys keeping
    /// its bytes) and, with it, logs the `tool_result` event that announces it in this
    /// store's event log, as a reference to the row (what [`EventLog::append_event`]
    /// logs for a result that names its stored row), in the same transaction (SQLite's
    /// commit, Postgres's statement): neither is stored without the other. Returns
    /// the message and the event's number, `None` when the event could not be logged
    /// (the result is then stored alone all the same: events are advisory). Only where
    /// [`HistoryStore::announces_appends`] says so; elsewhere it writes nothing and says
    /// so.
    async fn append_announced(
        &self,
        _session_id: &str,
        _result: ToolResult,
        _inline: Vec<InlineBlob>,
        _at: String,
    ) -> Result<(StoredMessage, Option<u64>)> {
        Err(crate::error::StoreError::CommitFailed {
            message: "this history does not log events with its appends".into(),
        })
    }
}

/// The per-session event streams, resumable from any number.
#[async_trait]
pub trait EventLog: Send + Sync + fmt::Debug {
    /// Logs `kind` as the session's next event and returns it numbered. The number is
    /// assigned in the same transaction as the insert, so several writers (tasks or
    /// processes) on one session never collide or renumber.
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event>;

    /// Queues `kind` to be logged after every event queued before it, and returns once it
    /// is queued, not once it is logged: the returned future resolves to the event,
    /// numbered, when it is. For an announcement nobody waits on (a call started), so the
    /// caller goes on while the log commits. A log without a queue logs it first.
    async fn queue_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<QueuedEvent> {
        let event = self.append_event(session_id, at, kind).await;
        Ok(Box::pin(std::future::ready(event)))
    }

    /// Logs several events of one session, in order, as one write where the log can (a
    /// single commit for all of them).
    async fn append_events(
        &self,
        session_id: &str,
        events: Vec<(String, EventKind)>,
    ) -> Result<Vec<Event>> {
        let mut logged = Vec::with_capacity(events.len());
        for (at, kind) in events {
            logged.push(self.append_event(session_id, at, kind).await?);
        }
        Ok(logged)
    }

    /// Events of a session numbered above `after`, in order.
    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>>;

    /// The highest event number of a session, 0 if none.
    async fn last_event_seq(&self, session_id: &str) -> Result<u64>;

    /// The highest event number of each of `session_ids` (0 where none), in their order:
    /// what a process following many sessions compares with what it has, in one look.
    /// This default asks once per session; the SQL logs answer in one statement.
    async fn last_event_seqs(&self, session_ids: &[String]) -> Result<Vec<u64>> {
        let mut seqs = Vec::with_capacity(session_ids.len());
        for id in session_ids {
            seqs.push(self.last_event_seq(id).await?);
        }
        Ok(seqs)
    }

    /// Word of what other writers (processes, or other machines on a shared database)
    /// logged: one stream per process, which the event bus routes to the sessions it
    /// follows. `None` when no other writer can log here (an in-memory log): this
    /// process's own events are all there is.
    fn wakeups(&self) -> Option<tokio::sync::broadcast::Receiver<EventWake>> {
        None
    }
}

/// An event on its way into the log ([`EventLog::queue_event`]): resolves to it, numbered,
/// once it is logged.
pub type QueuedEvent = futures::future::BoxFuture<'static, Result<Event>>;

/// Word from the log about writes this process may not have seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventWake {
    /// An event was logged, maybe by another process: `seq` of `session_id` (Postgres's
    /// `NOTIFY` says which).
    Logged {
        /// The session the event belongs to.
        session_id: String,
        /// The event's number in its session.
        seq: u64,
    },
    /// Another writer changed the log, or word of it may have been lost (a listener that
    /// reconnected): whoever follows sessions compares each with the log
    /// ([`EventLog::last_event_seqs`]), and a feed looks whether its session still exists.
    /// SQLite says only this: it knows that another connection committed, not what.
    Changed,
    /// A session was deleted, maybe by another process (Postgres's `NOTIFY` says which):
    /// its feeds here look for it, find it gone, and end.
    Deleted {
        /// The deleted session.
        session_id: String,
    },
    /// Nothing is known to have changed, but word of an event may have been lost without
    /// the listener seeing it go (a `NOTIFY` that failed after its event was stored):
    /// followers compare their sessions with the log, one statement per process. Not a
    /// reason for every feed to look whether its session still exists: that is what kept
    /// 10,000 idle feeds on four instances reading 2,000 sessions a second.
    Resync,
}

/// Calls waiting for a person, durable so that any process can finish them.
#[async_trait]
pub trait SuspensionStore: Send + Sync + fmt::Debug {
    /// Records a pending call, replacing one with the same suspension id.
    async fn put_suspension(&self, pending: &PendingCall) -> Result<()>;

    /// Claims a pending call to finish it; of two concurrent claimers only one gets it.
    /// The call stays listed, marked `resolving`, until [`Self::finish_suspension`]: a
    /// crash between the answer and the stored result leaves a trace, not nothing.
    async fn claim_suspension(&self, id: &str) -> Result<Option<PendingCall>>;

    /// Forgets a suspension once its call's final result is stored (no-op if unknown).
    async fn finish_suspension(&self, id: &str) -> Result<()>;

    /// The pending and resolving calls of a session, oldest first.
    async fn suspensions(&self, session_id: &str) -> Result<Vec<PendingCall>>;
}
