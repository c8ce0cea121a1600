//! Events: what happened in a session, numbered per session by the store that logs them,
//! so that a subscriber can resume from any number without loss or repeat.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::pending::Answered;
use crate::result::{Suspension, ToolResult};
use crate::widget::Widget;

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub session_id: String,
    /// 1, 2, 3, ... per session, without gaps; assigned when the event is logged.
    pub seq: u64,
    /// RFC 3339.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened; its `type` is the SSE event name on the feeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum EventKind {
    SessionStarted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<String>,
    },
    SessionEnded,
    TurnStarted {
        turn: u32,
    },
    TurnEnded {
        turn: u32,
    },
    AssistantDelta {
        text: String,
    },
    ToolCallStarted {
        call_id: String,
        tool_name: String,
        input: Json,
    },
    Progress {
        call_id: String,
        done: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The sanitized result. `raw` (the tool's payload before normalizing) rides along
    /// only when debugging asks for it.
    ToolResult {
        result: Box<ToolResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<Json>,
    },
    /// Boxed: a widget's data (an ordered map) makes this the largest variant.
    Widget {
        call_id: String,
        widget: Box<Widget>,
    },
    Suspended {
        call_id: String,
        suspension: Suspension,
    },
    Resolved {
        call_id: String,
        suspension_id: String,
        resolution: Answered,
    },
}

impl EventKind {
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
            },
            EventKind::Progress {
                call_id: "c".into(),
                done: 1,
                total: None,
                message: None,
            },
            EventKind::ToolResult {
                result: Box::new(ToolResult::success(
                    CallRef::new("c", "t"),
                    Value::text("x"),
                )),
                raw: None,
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
