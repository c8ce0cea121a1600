//! Who answers a suspended call during a turn: a person at a terminal, a web UI, a policy.

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use toolwire_core::{
    CallRef, ErrorCode, Message, Resolution, Status, Suspension, SuspensionReason, ToolCall,
    ToolResult,
};
use toolwire_runtime::{Executor, LandError, ResolveError};
use toolwire_store::{StoredMessage, Stores};

/// What the person is told when a turn is cancelled while a call waits for them.
const CANCELLED_WHILE_WAITING: &str = "the turn was cancelled before the user answered";

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

/// Finishes a call's result: while it is suspended, asks `approver` and resolves it through
/// the executor (an approved call may suspend again, e.g. to ask a question). Returns the
/// final result and the ids of the suspensions it went through, which the caller settles
/// once the result is stored. The agent loop and `Host::call` both end calls here.
///
/// `cancel` stops the wait: a call still waiting is denied, an approved call still running
/// ends as `cancelled` (its future is dropped, which stops the tool).
///
/// When another instance claimed the call (answered there), that instance runs it and
/// stores its result: [`Settled::Elsewhere`] names the claimed suspension, and
/// [`store_settled`] waits for that result instead of storing one.
pub(crate) async fn settle(
    executor: &Executor,
    approver: &dyn Approver,
    session_id: &str,
    call: &ToolCall,
    mut result: ToolResult,
    cancel: &CancellationToken,
) -> (Settled, Vec<String>) {
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
        match settle_once(executor, approver, &request, cancel).await {
            Some(next) => result = next,
            None => {
                let claimed = request.suspension.id;
                return (Settled::Elsewhere(claimed), suspended);
            }
        }
    }
    (Settled::Here(Box::new(result)), suspended)
}

/// How a suspended call ended for this instance.
pub(crate) enum Settled {
    /// With this result, to be stored.
    Here(Box<ToolResult>),
    /// Claimed by another instance under this suspension id; the result is theirs.
    Elsewhere(String),
}

/// How often a call finished by another instance is looked for in the history.
const ELSEWHERE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Lands a settled call's result (stored, announced, its `suspended` ids forgotten) and
/// returns it as stored, for one settled here; for one claimed elsewhere, the result
/// stored there once it is there (the call may still be running), so nothing is stored
/// twice. `None` when
/// `cancel` ends that wait first: the result still comes, and until then the model views
/// answer the call as interrupted. If nobody holds the claim any more and no result was
/// stored (the other instance died mid-call), the call gets a `suspension_failed` result.
pub(crate) async fn store_settled(
    executor: &Executor,
    stores: &Stores,
    session_id: &str,
    call: &ToolCall,
    settled: Settled,
    suspended: Vec<String>,
    cancel: &CancellationToken,
) -> Result<Option<StoredMessage>, LandError> {
    let suspension_id = match settled {
        Settled::Here(result) => {
            return executor
                .land(session_id, *result, suspended)
                .await
                .map(Some);
        }
        Settled::Elsewhere(id) => id,
    };
    // The claimed suspension is the other instance's to forget; the earlier ones (a call
    // that asked more than once) are this one's.
    let ours: Vec<String> = suspended
        .into_iter()
        .filter(|id| *id != suspension_id)
        .collect();
    loop {
        // Read the claim before the history: a result stored and its row forgotten
        // between the two reads is then still found.
        let claimed = stores
            .suspensions()
            .suspensions(session_id)
            .await?
            .iter()
            .any(|p| p.suspension.id == suspension_id);
        if let Some(found) = stores.history().find_result(session_id, &call.id).await? {
            forget(executor, &ours).await;
            return Ok(Some(StoredMessage {
                id: found.message_id,
                session_id: found.session_id,
                seq: found.seq,
                // Not kept by `find_result`, and not read by a turn or a call's caller.
                created_at_ms: 0,
                content: Message::ToolResult(found.result),
            }));
        }
        if !claimed {
            let lost = ToolResult::error_with_code(
                CallRef::new(&call.id, &call.name),
                ErrorCode::SuspensionFailed,
                "the call was answered elsewhere, but no result was stored there",
            );
            return executor.land(session_id, lost, ours).await.map(Some);
        }
        tokio::select! {
            () = cancel.cancelled() => {
                forget(executor, &ours).await;
                return Ok(None);
            }
            () = tokio::time::sleep(ELSEWHERE_POLL) => {}
        }
    }
}

/// Forgets suspensions that are done with; a failure leaves a row that lists as
/// resolving, which is harmless.
async fn forget(executor: &Executor, ids: &[String]) {
    for id in ids {
        let _ = executor.settled(id).await;
    }
}

/// Asks the approver about one suspended call and finishes it through the executor;
/// `None` when another instance has claimed it.
async fn settle_once(
    executor: &Executor,
    approver: &dyn Approver,
    request: &ApprovalRequest,
    cancel: &CancellationToken,
) -> Option<ToolResult> {
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
    let denied = matches!(
        resolution,
        Resolution::Deny { .. } | Resolution::Cancel { .. } | Resolution::Refuse { .. }
    );
    let resolved = tokio::select! {
        biased;
        // An approved call runs under the executor's own token; a cancel stops waiting
        // for it and drops its future, which stops the tool.
        // The result is announced when it lands, like any other.
        _ = cancel.cancelled(), if !denied => Ok(toolwire_runtime::interrupted(call_ref.clone())),
        r = executor.resolve(&request.suspension.id, resolution) => r,
    };
    match resolved {
        Ok(result) => Some(result),
        // Claimed by someone else (another instance, answered there): its result is
        // theirs to store; storing an error here would give the call a second result.
        Err(ResolveError::NotFound(_)) => None,
        Err(e) => Some(ToolResult::error_with_code(
            call_ref,
            ErrorCode::SuspensionFailed,
            format!("could not finish the suspended call: {e}"),
        )),
    }
}
