//! The stored side of the conversation: sessions, paging, and a stored [`Message`] with
//! where it sits (how it is kept as a row is `codec.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolwire_core::Message;

/// A session: one conversation, possibly a subagent's under a parent session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The session id (`ses_…`, or one the caller chose).
    pub id: String,
    /// The session that started this one, for a subagent's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// A title, set by the host or a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// When it last changed, in milliseconds since the Unix epoch.
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

/// What a new session starts with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewSession {
    /// Generated when `None`.
    pub id: Option<String>,
    /// The parent session, for a subagent's session.
    pub parent_id: Option<String>,
    /// A title.
    pub title: Option<String>,
}

impl NewSession {
    /// A subagent's session under `parent_id`, with a generated id.
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
    /// Items to skip.
    pub offset: u32,
    /// Items to return at most.
    pub limit: u32,
}

/// Seq paging for a session's messages: those after `after_seq` (0: from the first), in
/// order, at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessagePage {
    /// The last seq already read.
    pub after_seq: i64,
    /// Messages to return at most.
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
    /// The row id, unique across the store.
    pub id: i64,
    /// The session it belongs to.
    pub session_id: String,
    /// 1-based position in the session.
    pub seq: i64,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// The message itself.
    #[serde(flatten)]
    pub content: Message,
}

/// A stored message as its row holds it: the message's canonical JSON, unparsed, for a
/// reader that passes messages on (the web API) rather than looks inside them. The body
/// was checked when it was written; reading it back does not parse it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawStoredMessage {
    /// The row id, as in [`StoredMessage::id`].
    pub id: i64,
    /// 1-based position in the session.
    pub seq: i64,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// The message's role as serialized (`user`, `tool_result`, …).
    pub role: String,
    /// The message's content as canonical JSON (an object).
    pub body: String,
}

impl RawStoredMessage {
    /// Appends `messages` to `out` as the JSON array the same [`StoredMessage`]s serialize
    /// to (same keys, same order); `session_id` is the session's id. A long session is
    /// written with one quoting of the id, not one per message.
    pub fn write_json_array(messages: &[RawStoredMessage], session_id: &str, out: &mut String) {
        use std::fmt::Write;
        // Ids are plain ASCII (checked on write), but quote them properly anyway.
        let session = serde_json::to_string(session_id).unwrap_or_else(|_| "\"\"".to_owned());
        out.push('[');
        for (i, m) in messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"id\":{},\"sessionId\":{session},\"seq\":{},\"createdAtMs\":{},\"role\":",
                m.id, m.seq, m.created_at_ms,
            );
            // A raw message's role is one of the known roles (checked when read), which are
            // plain lowercase words: nothing to escape.
            if m.role.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                out.push('"');
                out.push_str(&m.role);
                out.push('"');
            } else {
                out.push_str(&serde_json::to_string(&m.role).unwrap_or_default());
            }
            out.push_str(",\"content\":");
            out.push_str(&m.body);
            out.push('}');
        }
        out.push(']');
    }
}
