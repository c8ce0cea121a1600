//! The stored side of the conversation: sessions, paging, and a stored [`Message`] with
//! where it sits (how it is kept as a row is `codec.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolwire_core::Message;

/// A session: one conversation, possibly a subagent's under a parent session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// Number of messages (seqs run 1..=message_count).
    pub message_count: i64,
    /// Tool calls: those with a stored result and those waiting for a person.
    #[serde(default)]
    pub call_count: i64,
    /// Calls waiting for a person (an approval, a question); not those already answered.
    #[serde(default)]
    pub pending_count: i64,
    /// Calls whose stored result is an error.
    #[serde(default)]
    pub error_count: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewSession {
    /// Generated when `None`.
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub title: Option<String>,
}

impl NewSession {
    pub fn child_of(parent_id: impl Into<String>) -> Self {
        NewSession {
            parent_id: Some(parent_id.into()),
            ..NewSession::default()
        }
    }
}

/// Offset paging for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub offset: u32,
    pub limit: u32,
}

impl Default for Page {
    fn default() -> Self {
        Page {
            offset: 0,
            limit: 50,
        }
    }
}

/// One stored message: the shared conversation [`Message`] and where it sits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    pub id: i64,
    pub session_id: String,
    /// 1-based position in the session.
    pub seq: i64,
    pub created_at_ms: i64,
    #[serde(flatten)]
    pub content: Message,
}
