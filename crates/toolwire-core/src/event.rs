//! Events: what happened in a session, numbered per session by the store that logs them,
//! so that a subscriber can resume from any number without loss or repeat.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::pending::Answered;
use crate::result::{Suspension, ToolResult};
use crate::widget::Widget;

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The session the event belongs to.
    pub session_id: String,
    /// 1, 2, 3, ... per session, without gaps; assigned when the event is logged.
    pub seq: u64,
    /// RFC 3339.
    pub at: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// The row id of the history's message that holds a result ([`EventKind::ToolResult`]),
/// when the history holds it. Every two are equal: an event read back from the log (which
/// never carries it) is the same event as the one announced.
#[derive(Debug, Clone, Copy, Default)]
pub struct StoredAt(pub Option<i64>);

impl PartialEq for StoredAt {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What happened; its `type` is the SSE event name on the feeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum EventKind {
    /// A session began; a subagent's session names the call that started it.
    SessionStarted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The `task` call whose subagent runs in this session.
        parent_call_id: Option<String>,
    },
    /// The session ended: no more events follow.
    SessionEnded,
    /// The agent loop began a turn (one model request and the calls it made).
    TurnStarted {
        /// The turn's number within the session, from 1.
        turn: u32,
    },
    /// The agent loop finished a turn.
    TurnEnded {
        /// The turn's number within the session, from 1.
        turn: u32,
    },
    /// A piece of the model's text as it streams in.
    AssistantDelta {
        /// The new text, to append to what came before.
        text: String,
    },
    /// A tool call began running.
    ToolCallStarted {
        /// The call's id.
        call_id: String,
        /// The tool it runs.
        tool_name: String,
        /// The input it was given.
        input: Json,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// Set when a person made the call, not the model (the call's own `byPerson`):
        /// a page watching the session learns it as the call starts, as one that loads
        /// the stored call does (the web app folds an MCP App's polls by it).
        by_person: Option<crate::ByPerson>,
    },
    /// A running call reported progress.
    Progress {
        /// The call's id.
        call_id: String,
        /// Units of work done so far.
        done: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// Units in all, when the tool knows.
        total: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// What it is doing now.
        message: Option<String>,
    },
    /// The sanitized result. `raw` (the tool's payload before normalizing) rides along
    /// only when debugging asks for it.
    ToolResult {
        /// The result, as the model and the history see it.
        // Shared: every copy of the event (the log's, each broadcast's) is this one
        // result, not a deep copy of it. (Not in the doc comment: that is the schema's
        // description.)
        result: Arc<ToolResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The tool's payload before normalizing.
        raw: Option<Json>,
        /// Where the history already holds this result, when it does (the landing that
        /// stored it says so): the log then keeps a reference to that message instead of
        /// a second copy of the result. A hint to the log, not part of what happened:
        /// never on the wire, and equal whatever it says.
        #[serde(skip)]
        #[schemars(skip)]
        stored: StoredAt,
    },
    /// Boxed: a widget's data (an ordered map) makes this the largest variant.
    Widget {
        /// The call that pushed the widget.
        call_id: String,
        /// The widget to show.
        widget: Box<Widget>,
    },
    /// A call paused, waiting for an approval, an answer or a login.
    Suspended {
        /// The paused call's id.
        call_id: String,
        /// What it waits for and why.
        suspension: Suspension,
    },
    /// A paused call got what it waited for, and resumes.
    Resolved {
        /// The resumed call's id.
        call_id: String,
        /// The suspension that was answered.
        suspension_id: String,
        /// How it was answered.
        resolution: Answered,
    },
}

impl EventKind {
    /// A result's event, as the history has not stored it (or its store does not say).
    pub fn tool_result(result: ToolResult, raw: Option<Json>) -> Self {
        EventKind::ToolResult {
            result: Arc::new(result),
            raw,
            stored: StoredAt::default(),
        }
    }

    /// The event's `type`, as it is written on the wire (`tool_result`, …): the SSE event
    /// name, found without writing the event out.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::SessionStarted { .. } => "session_started",
            EventKind::SessionEnded => "session_ended",
            EventKind::TurnStarted { .. } => "turn_started",
            EventKind::TurnEnded { .. } => "turn_ended",
            EventKind::AssistantDelta { .. } => "assistant_delta",
            EventKind::ToolCallStarted { .. } => "tool_call_started",
            EventKind::Progress { .. } => "progress",
            EventKind::ToolResult { .. } => "tool_result",
            EventKind::Widget { .. } => "widget",
            EventKind::Suspended { .. } => "suspended",
            EventKind::Resolved { .. } => "resolved",
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::result::SuspensionReason;
    use crate::{CallRef, Value};

    /// `name` is the `type` serde writes, for every kind.
    #[test]
    fn each_name_is_the_type_on_the_wire() {
        let suspension = Suspension {
            id: "s".into(),
            reason: SuspensionReason::Approval,
            prompt: "ok?".into(),
            input_schema: None,
        };
        let kinds = [
            EventKind::SessionStarted {
                parent_call_id: None,
            },
            EventKind::SessionEnded,
            EventKind::TurnStarted { turn: 1 },
            EventKind::TurnEnded { turn: 1 },
            EventKind::AssistantDelta { text: "a".into() },
            EventKind::ToolCallStarted {
                call_id: "c".into(),
                tool_name: "t".into(),
                input: Json::Null,
                by_person: None,
            },
            EventKind::Progress {
                call_id: "c".into(),
                done: 1,
                total: None,
                message: None,
            },
            EventKind::ToolResult {
                result: Arc::new(ToolResult::success(
                    CallRef::new("c", "t"),
                    Value::text("x"),
                )),
                raw: None,
                stored: StoredAt::default(),
            },
            EventKind::Widget {
                call_id: "c".into(),
                widget: Box::new(Widget::new("chart", Json::Null, "a chart")),
            },
            EventKind::Suspended {
                call_id: "c".into(),
                suspension,
            },
            EventKind::Resolved {
                call_id: "c".into(),
                suspension_id: "s".into(),
                resolution: Answered::Approved,
            },
        ];
        for kind in kinds {
            let written = serde_json::to_value(&kind).unwrap();
            assert_eq!(written["type"], kind.name(), "{written}");
        }
    }
}
