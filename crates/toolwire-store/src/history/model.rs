//! The stored conversation model: provider-neutral, serializable, kept deliberately small.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use toolwire_core::{ToolResult, Widget};

use crate::error::{Result, StoreError};

/// A session: one conversation, possibly a subagent's under a parent session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// One stored message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: i64,
    pub session_id: String,
    /// 1-based position in the session.
    pub seq: i64,
    pub created_at_ms: i64,
    #[serde(flatten)]
    pub content: MessageContent,
}

/// A model's request to run a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Json,
    /// Opaque provider data the call must carry back to the model (a Gemini thought
    /// signature), kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// What a message says. The `role` tag names the stored row kind; events (a later issue)
/// will be one more variant.
// Tool results are most messages; boxing them would cost an allocation each for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "role",
    content = "content",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum MessageContent {
    User {
        text: String,
    },
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    ToolResult(ToolResult),
    /// A widget shown outside any tool result, e.g. one a subagent pushed.
    Widget {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        widget: Widget,
    },
}

pub(crate) const ROLE_USER: &str = "user";
pub(crate) const ROLE_ASSISTANT: &str = "assistant";
pub(crate) const ROLE_TOOL_RESULT: &str = "tool_result";
pub(crate) const ROLE_WIDGET: &str = "widget";

/// Row bodies of the non-result roles; a tool result's body is the ToolResult itself.
#[derive(Serialize, Deserialize)]
struct UserBody {
    text: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AssistantBody {
    #[serde(default)]
    text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetBody {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    call_id: Option<String>,
    widget: Widget,
}

impl MessageContent {
    pub fn role(&self) -> &'static str {
        match self {
            MessageContent::User { .. } => ROLE_USER,
            MessageContent::Assistant { .. } => ROLE_ASSISTANT,
            MessageContent::ToolResult(_) => ROLE_TOOL_RESULT,
            MessageContent::Widget { .. } => ROLE_WIDGET,
        }
    }

    /// The call id a row is indexed under.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            MessageContent::ToolResult(r) => Some(&r.call_id),
            MessageContent::Widget { call_id, .. } => call_id.as_deref(),
            _ => None,
        }
    }

    pub fn as_tool_result(&self) -> Option<&ToolResult> {
        match self {
            MessageContent::ToolResult(r) => Some(r),
            _ => None,
        }
    }

    /// The canonical JSON stored in the row.
    pub(crate) fn body_json(&self) -> Result<String> {
        Ok(match self {
            MessageContent::User { text } => {
                serde_json::to_string(&UserBody { text: text.clone() })?
            }
            MessageContent::Assistant { text, tool_calls } => {
                serde_json::to_string(&AssistantBody {
                    text: text.clone(),
                    tool_calls: tool_calls.clone(),
                })?
            }
            MessageContent::ToolResult(result) => serde_json::to_string(result)?,
            MessageContent::Widget { call_id, widget } => serde_json::to_string(&WidgetBody {
                call_id: call_id.clone(),
                widget: widget.clone(),
            })?,
        })
    }

    pub(crate) fn from_row(role: &str, body: &str) -> Result<Self, String> {
        let err = |e: serde_json::Error| e.to_string();
        Ok(match role {
            ROLE_USER => {
                let b: UserBody = serde_json::from_str(body).map_err(err)?;
                MessageContent::User { text: b.text }
            }
            ROLE_ASSISTANT => {
                let b: AssistantBody = serde_json::from_str(body).map_err(err)?;
                MessageContent::Assistant {
                    text: b.text,
                    tool_calls: b.tool_calls,
                }
            }
            ROLE_TOOL_RESULT => {
                MessageContent::ToolResult(serde_json::from_str(body).map_err(err)?)
            }
            ROLE_WIDGET => {
                let b: WidgetBody = serde_json::from_str(body).map_err(err)?;
                MessageContent::Widget {
                    call_id: b.call_id,
                    widget: b.widget,
                }
            }
            other => return Err(format!("unknown role {other:?}")),
        })
    }

    /// Checks every id in the message before it reaches storage.
    pub(crate) fn validate_ids(&self) -> Result<()> {
        use crate::ids::validate_id;
        match self {
            MessageContent::ToolResult(r) => validate_id("call id", &r.call_id),
            MessageContent::Widget {
                call_id: Some(id), ..
            } => validate_id("call id", id),
            MessageContent::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .try_for_each(|c| validate_id("call id", &c.id)),
            _ => Ok(()),
        }
    }
}

pub(crate) fn corrupt_row(session_id: &str, seq: i64, message: String) -> StoreError {
    StoreError::CorruptRow {
        session_id: session_id.to_owned(),
        seq,
        message,
    }
}
