//! A call waiting for a person ([`PendingCall`]) and how the person answered
//! ([`Resolution`]): stored so that any process can finish the call, also after a restart.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::conversation::ToolCall;
use crate::result::Suspension;

/// A suspended call and what is needed to finish it in another process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// What the call waits for, with the id an answer names.
    pub suspension: Suspension,
    /// The call itself, to run (or resume) once answered.
    pub call: ToolCall,
    /// The session the call belongs to.
    pub session_id: String,
    /// The trace the call runs under, kept so its resumption logs under the same trace.
    pub trace_id: String,
    /// Who owns the session, for stores that keep calls per user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Set when the tool suspended itself mid-run: the state it asked to keep (null when
    /// none). Such a call is finished by the tool's own `resume`, not by the executor.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::result::present_json"
    )]
    pub tool_state: Option<Json>,
    /// When the call began to wait (RFC 3339): what its answer's wait is measured from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspended_at: Option<String>,
    /// Milliseconds the call waited for a person in earlier rounds (an MCP server that
    /// asks twice), so the final result's `waitedMs` counts every wait.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waited_ms: u64,
    /// Set by the store: an answer was accepted and the call is being finished. Such a
    /// call stays listed until its result is stored, so a crash in between is visible.
    #[serde(skip)]
    pub resolving: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resolution {
    /// Run the call.
    Approve,
    /// Do not run it; the model is told the user denied it.
    Deny {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// Why, in the person's words; the model is told it.
        reason: Option<String>,
    },
    /// The answer to a blocking tool; it becomes the output with no re-execution.
    Answer {
        /// The answer, matching the suspension's `inputSchema`.
        value: Json,
    },
    /// The person dismissed the question without answering it (MCP's `cancel`, beside
    /// `decline`, which is [`Resolution::Deny`]). The call ends.
    Cancel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// Why, in the person's words.
        reason: Option<String>,
    },
    /// Not run, and not by a person's decision: toolwire itself refused the call (e.g.
    /// the gateway holds too many calls waiting for their host, or the host never came
    /// back with the answer). The model is told so in toolwire's words, never as the
    /// user's denial. Only toolwire makes it: it is never read from the wire.
    #[serde(skip)]
    Refuse {
        /// Why, in toolwire's words; the model is told it.
        reason: String,
    },
}

impl Resolution {
    /// How the call was answered, without the answer itself: what a `resolved` event
    /// carries.
    pub fn outcome(&self) -> Answered {
        match self {
            Resolution::Approve => Answered::Approved,
            Resolution::Deny { .. } => Answered::Denied,
            Resolution::Answer { .. } => Answered::Answered,
            Resolution::Cancel { .. } => Answered::Cancelled,
            Resolution::Refuse { .. } => Answered::Denied,
        }
    }
}

/// How a suspended call was answered, as a `resolved` event says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Answered {
    /// The call was approved and runs.
    Approved,
    /// The call was denied.
    Denied,
    /// A blocking tool got its answer.
    Answered,
    /// The question was dismissed; the call ended.
    Cancelled,
}
