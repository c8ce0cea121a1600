//! Events: what happened in a session, numbered per session by the store that logs them,
//! so that a subscriber can resume from any number without loss or repeat.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::result::{Suspension, ToolResult};
use crate::widget::Widget;

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
        resolution: String,
    },
}
