//! Who answers a suspended call during a turn: a person at a terminal, a web UI, a policy.

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use toolwire_core::{
    CallRef, ErrorCode, EventKind, Resolution, Status, Suspension, SuspensionReason, ToolCall,
    ToolResult,
};
use toolwire_runtime::Executor;

/// What the person is told when a turn is cancelled while a call waits for them.
const CANCELLED_WHILE_WAITING: &str = "the turn was cancelled before the user answered";

/// One call waiting for a person: an approval (run it or not) or a blocking tool's
/// question (answer it).
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub session_id: String,
    pub call: ToolCall,
    pub suspension: Suspension,
}

impl ApprovalRequest {
    pub fn is_question(&self) -> bool {
        self.suspension.reason == SuspensionReason::Input
    }
}

/// Decides suspended calls. The loop asks once per suspended call, in call order, and
/// stops waiting (denying the call) when the turn is cancelled.
pub trait Approver: Send + Sync {
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
    pub reason: Option<String>,
}

impl Approver for DenyAll {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        let reason = self.reason.clone();
        Box::pin(async move { Resolution::Deny { reason } })
    }
}

/// Finishes a call's result: while it is suspended, asks `approver` and resolves it through
/// the executor (an approved call may suspend again, e.g. to ask a question). Returns the
/// final result and the ids of the suspensions it went through, which the caller settles
/// once the result is stored. The agent loop and `Host::call` both end calls here.
///
/// `cancel` stops the wait: a call still waiting is denied, an approved call still running
/// ends as `cancelled` (its future is dropped, which stops the tool).
pub(crate) async fn settle(
    executor: &Executor,
    approver: &dyn Approver,
    session_id: &str,
    call: &ToolCall,
    mut result: ToolResult,
    cancel: &CancellationToken,
) -> (ToolResult, Vec<String>) {
    let mut suspended = Vec::new();
    while result.status == Status::Suspended {
        let Some(suspension) = result.suspension.clone() else {
            break;
        };
        suspended.push(suspension.id.clone());
        let request = ApprovalRequest {
            session_id: session_id.to_owned(),
            call: call.clone(),
            suspension,
        };
        result = settle_once(executor, approver, &request, cancel).await;
    }
    (result, suspended)
}

/// Asks the approver about one suspended call and finishes it through the executor.
async fn settle_once(
    executor: &Executor,
    approver: &dyn Approver,
    request: &ApprovalRequest,
    cancel: &CancellationToken,
) -> ToolResult {
    let call_ref = CallRef::new(&request.call.id, &request.call.name);
    let cancelled_deny = || Resolution::Deny {
        reason: Some(CANCELLED_WHILE_WAITING.to_owned()),
    };
    let resolution = if cancel.is_cancelled() {
        cancelled_deny()
    } else {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => cancelled_deny(),
            r = approver.decide(request) => r,
        }
    };
    let denied = matches!(resolution, Resolution::Deny { .. });
    let resolved = tokio::select! {
        biased;
        // An approved call runs under the executor's own token; a cancel stops waiting
        // for it and drops its future, which stops the tool.
        _ = cancel.cancelled(), if !denied => {
            let result = ToolResult::error_with_code(
                call_ref.clone(),
                ErrorCode::Cancelled,
                "cancelled: interrupted before completion",
            );
            let event = EventKind::ToolResult { result: Box::new(result.clone()), raw: None };
            let _ = executor.events().emit(&request.session_id, event).await;
            Ok(result)
        }
        r = executor.resolve(&request.suspension.id, resolution) => r,
    };
    match resolved {
        Ok(result) => result,
        Err(e) => ToolResult::error_with_code(
            call_ref,
            ErrorCode::SuspensionFailed,
            format!("could not finish the suspended call: {e}"),
        ),
    }
}
