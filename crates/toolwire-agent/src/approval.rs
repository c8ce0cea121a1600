//! Who answers a suspended call during a turn: a person at a terminal, a web UI, a policy.

use futures::future::BoxFuture;
use toolwire_core::{Resolution, Suspension, SuspensionReason, ToolCall};

/// One call waiting for a person: an approval (run it or not) or a blocking tool's
/// question (answer it).
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The session of the call.
    pub session_id: String,
    /// The call waiting.
    pub call: ToolCall,
    /// What it waits for: an approval, or an answer to a question.
    pub suspension: Suspension,
}

impl ApprovalRequest {
    /// Whether it waits for an answer rather than a yes or no.
    pub fn is_question(&self) -> bool {
        self.suspension.reason == SuspensionReason::Input
    }
}

/// Decides suspended calls. The loop asks once per suspended call, in call order, and
/// stops waiting (denying the call) when the turn is cancelled.
pub trait Approver: Send + Sync {
    /// Decides one suspended call; resolves to the decision.
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution>;
}

/// Approves every call; a blocking tool's question is answered with an empty string.
/// For trusted, unattended runs only.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        let resolution = if request.is_question() {
            Resolution::Answer {
                value: serde_json::Value::String(String::new()),
            }
        } else {
            Resolution::Approve
        };
        Box::pin(async move { resolution })
    }
}

/// Denies every call that needs a person, saying why; the safe default with nobody there.
#[derive(Debug, Clone, Default)]
pub struct DenyAll {
    /// Said to the model as the reason; a generic one when `None`.
    pub reason: Option<String>,
}

impl Approver for DenyAll {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        let reason = self.reason.clone();
        Box::pin(async move { Resolution::Deny { reason } })
    }
}
