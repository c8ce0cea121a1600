//! How each shared [`Message`] is kept as a row: a role and a canonical JSON body, and
//! back. Only the SQL backends store rows.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use toolwire_core::{Message, ToolCall, Widget};

use crate::error::{Result, StoreError};

pub(crate) const ROLE_SYSTEM: &str = "system";
pub(crate) const ROLE_USER: &str = "user";
pub(crate) const ROLE_ASSISTANT: &str = "assistant";
pub(crate) const ROLE_TOOL_RESULT: &str = "tool_result";
pub(crate) const ROLE_WIDGET: &str = "widget";

/// Row bodies of the non-result roles; a tool result's body is the ToolResult itself,
/// so a load returns the exact bytes that were stored. Borrowed when written, so a large
/// message is not copied to be serialized.
#[derive(Serialize, Deserialize)]
struct TextBody<'a> {
    text: Cow<'a, str>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AssistantBody<'a> {
    #[serde(default)]
    text: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "<[ToolCall]>::is_empty")]
    tool_calls: Cow<'a, [ToolCall]>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetBody<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    call_id: Option<Cow<'a, str>>,
    widget: Cow<'a, Widget>,
}

/// The row kind a message is stored as.
pub(crate) fn role(message: &Message) -> &'static str {
    match message {
        Message::System { .. } => ROLE_SYSTEM,
        Message::User { .. } => ROLE_USER,
        Message::Assistant { .. } => ROLE_ASSISTANT,
        Message::ToolResult(_) => ROLE_TOOL_RESULT,
        Message::Widget { .. } => ROLE_WIDGET,
    }
}

/// Whether `role` is one a row may hold.
pub(crate) fn known_role(role: &str) -> bool {
    [
        ROLE_SYSTEM,
        ROLE_USER,
        ROLE_ASSISTANT,
        ROLE_TOOL_RESULT,
        ROLE_WIDGET,
    ]
    .contains(&role)
}

/// The canonical JSON stored in the row.
pub(crate) fn body_json(message: &Message) -> Result<String> {
    Ok(match message {
        Message::System { text } | Message::User { text } => {
            serde_json::to_string(&TextBody { text: text.into() })?
        }
        Message::Assistant { text, tool_calls } => serde_json::to_string(&AssistantBody {
            text: text.into(),
            tool_calls: tool_calls.into(),
        })?,
        Message::ToolResult(result) => serde_json::to_string(result)?,
        Message::Widget { call_id, widget } => serde_json::to_string(&WidgetBody {
            call_id: call_id.as_deref().map(Cow::Borrowed),
            widget: Cow::Borrowed(widget),
        })?,
    })
}

pub(crate) fn from_row(role: &str, body: &str) -> Result<Message, String> {
    let err = |e: serde_json::Error| e.to_string();
    Ok(match role {
        ROLE_SYSTEM => Message::System {
            text: serde_json::from_str::<TextBody>(body)
                .map_err(err)?
                .text
                .into_owned(),
        },
        ROLE_USER => Message::User {
            text: serde_json::from_str::<TextBody>(body)
                .map_err(err)?
                .text
                .into_owned(),
        },
        ROLE_ASSISTANT => {
            let b: AssistantBody = serde_json::from_str(body).map_err(err)?;
            Message::Assistant {
                text: b.text.into_owned(),
                tool_calls: b.tool_calls.into_owned(),
            }
        }
        ROLE_TOOL_RESULT => Message::ToolResult(serde_json::from_str(body).map_err(err)?),
        ROLE_WIDGET => {
            let b: WidgetBody = serde_json::from_str(body).map_err(err)?;
            Message::Widget {
                call_id: b.call_id.map(Cow::into_owned),
                widget: b.widget.into_owned(),
            }
        }
        other => return Err(format!("unknown role {other:?}")),
    })
}

/// Checks every id in the message before it reaches storage.
pub(crate) fn validate_ids(message: &Message) -> Result<()> {
    use crate::ids::validate_id;
    match message {
        Message::ToolResult(r) => validate_id("call id", &r.call_id),
        Message::Widget {
            call_id: Some(id), ..
        } => validate_id("call id", id),
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .try_for_each(|c| validate_id("call id", &c.id)),
        _ => Ok(()),
    }
}

pub(crate) fn corrupt_row(session_id: &str, seq: i64, message: String) -> StoreError {
    StoreError::CorruptRow {
        session_id: session_id.to_owned(),
        seq,
        message,
    }
}
