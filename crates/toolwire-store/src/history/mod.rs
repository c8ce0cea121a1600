//! `HistoryStore`: sessions and their ordered messages, including every tool result.

mod model;
mod sqlite;

use std::collections::BTreeSet;
use std::fmt;

use async_trait::async_trait;
use toolwire_core::ToolResult;

use crate::error::Result;
use crate::ids::BlobKey;

pub use model::{Message, MessageContent, NewSession, Page, Session, ToolCall};
pub use sqlite::SqliteHistory;

/// A stored tool result found by its call id.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResult {
    pub message_id: i64,
    pub session_id: String,
    pub seq: i64,
    pub result: ToolResult,
}

/// Durable, ordered session history. Implementations: SQLite now, Postgres later; both
/// store a tool result as its canonical JSON text, so a load returns the same bytes.
#[async_trait]
pub trait HistoryStore: Send + Sync + fmt::Debug {
    /// Creates a session; the id is generated when `new.id` is `None`.
    async fn create_session(&self, new: NewSession) -> Result<Session>;

    async fn session(&self, id: &str) -> Result<Option<Session>>;

    /// Sessions, most recently updated first.
    async fn list_sessions(&self, page: Page) -> Result<Vec<Session>>;

    /// Sessions whose parent is `parent_id` (subagents), oldest first.
    async fn child_sessions(&self, parent_id: &str) -> Result<Vec<Session>>;

    /// Appends a message. When this returns `Ok`, the message is on disk.
    async fn append(&self, session_id: &str, content: MessageContent) -> Result<Message>;

    /// Appends several messages atomically: all are stored, in order, or none.
    async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<MessageContent>,
    ) -> Result<Vec<Message>>;

    /// Every message of a session, in order.
    async fn load(&self, session_id: &str) -> Result<Vec<Message>>;

    /// The newest stored result with this call id.
    async fn find_result(&self, call_id: &str) -> Result<Option<StoredResult>>;

    /// Every blob some stored message references.
    async fn referenced_blobs(&self) -> Result<BTreeSet<BlobKey>>;

    /// Logs a runtime event (opaque JSON) under its per-session number. Numbers are
    /// unique: logging one twice is [`crate::StoreError::EventExists`].
    async fn append_event(&self, session_id: &str, seq: i64, body: String) -> Result<()>;

    /// Events of a session numbered above `after`, in order, as `(seq, body)`.
    async fn events_since(&self, session_id: &str, after: i64) -> Result<Vec<(i64, String)>>;

    /// The highest event number of a session, 0 if none.
    async fn last_event_seq(&self, session_id: &str) -> Result<i64>;

    /// Records a pending (suspended) call, replacing one with the same id.
    async fn put_suspension(&self, id: &str, session_id: &str, body: String) -> Result<()>;

    /// Removes and returns a pending call; of two concurrent takers only one gets it.
    async fn take_suspension(&self, id: &str) -> Result<Option<String>>;

    /// The pending calls of a session, oldest first.
    async fn suspensions(&self, session_id: &str) -> Result<Vec<String>>;
}
