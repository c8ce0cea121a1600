//! The one tail of every call: while it waits for a person, ask and resume it; then land
//! it, now or behind its answer. The agent loop, a person's call, the gateway's calls
//! (both revisions and tasks) and answers to pending calls all end calls here, so the
//! sequence execute → approve → land is written once.

use tokio_util::sync::CancellationToken;
use toolwire_core::{CallRef, ErrorCode, Resolution, ToolCall, ToolResult};
use toolwire_runtime::{Executor, Finished, LandError, ResolveError};
use toolwire_store::{StoredResult, Stores};

use crate::approval::{ApprovalRequest, Approver};
use crate::host::Recorder;

/// What the person is told when a turn is cancelled while a call waits for them.
const CANCELLED_WHILE_WAITING: &str = "the turn was cancelled before the user answered";

/// How often a call finished by another instance is looked for in the history.
const ELSEWHERE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// How a settled call reaches the history.
pub(crate) enum Land<'a> {
    /// Stored now; the caller gets it as stored.
    Now,
    /// Queued behind the answer (the gateway's calls); with `store_call`, the call
    /// itself is stored with its result (it was not stored as it started). A result with
    /// media, or a large one, is still waited for (the answer links to its stored media).
    Behind {
        recorder: &'a Recorder,
        store_call: bool,
    },
}

/// A concluded call: stored, or answered and queued to be stored.
pub(crate) enum Concluded {
    /// Stored, as stored (media by blob reference).
    Stored(StoredResult),
    /// Answered now, stored behind the answer.
    Queued(ToolResult),
}

impl Concluded {
    /// The result as stored, when it was.
    pub(crate) fn into_stored(self) -> Option<StoredResult> {
        match self {
            Concluded::Stored(stored) => Some(stored),
            Concluded::Queued(_) => None,
        }
    }

    /// The result the caller answers with.
    pub(crate) fn into_result(self) -> ToolResult {
        match self {
            Concluded::Stored(stored) => stored.result,
            Concluded::Queued(result) => result,
        }
    }
}

/// Who a call's tail works with.
pub(crate) struct Driver<'a> {
    pub(crate) executor: &'a Executor,
    pub(crate) stores: &'a Stores,
}

impl Driver<'_> {
    /// Concludes `finished` (a run of `call`): while it waits, `approver` is asked and
    /// the call resumed (an approved call may wait again, for a question); then it lands
    /// as `land` says. When another instance claimed it (answered there), that instance
    /// runs and stores it, and this waits for its stored result; `None` when `cancel`
    /// ends that wait first (the result still comes, and until then the model views
    /// answer the call as interrupted).
    ///
    /// `cancel` stops the wait for a person: a call still waiting is denied, an approved
    /// call still running ends as `cancelled`; `elsewhere` stops the wait for a result
    /// another instance stores. Once settled, the landing is never cancelled: every call
    /// keeps exactly one stored result.
    pub(crate) async fn conclude(
        &self,
        call: ToolCall,
        mut finished: Finished,
        approver: &dyn Approver,
        cancel: &CancellationToken,
        elsewhere: &CancellationToken,
        land: Land<'_>,
    ) -> Result<Option<Concluded>, LandError> {
        while finished.is_suspended() {
            let session_id = finished.session_id().to_owned();
            match self.settle_once(&call, finished, approver, cancel).await {
                Ok(next) => finished = next,
                Err((claimed, ours)) => {
                    return self
                        .stored_elsewhere(&session_id, &call, &claimed, ours, elsewhere)
                        .await;
                }
            }
        }
        match land {
            Land::Now => Ok(Some(Concluded::Stored(
                self.executor.land(finished, None).await?,
            ))),
            Land::Behind {
                recorder,
                store_call,
            } => {
                let call = store_call.then_some(call);
                recorder.land_behind(finished, call).await.map(Some)
            }
        }
    }

    /// Asks about one suspended call and resumes it. `Err` names the suspension another
    /// instance claimed (answered there) and the earlier ones that are this one's.
    async fn settle_once(
        &self,
        call: &ToolCall,
        finished: Finished,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<Finished, (String, Vec<String>)> {
        let call_ref = CallRef::new(&call.id, &call.name);
        let session_id = finished.session_id().to_owned();
        let ids = finished.suspensions().to_vec();
        let Some(suspension) = finished.result().suspension.clone() else {
            // Suspended without saying on what: nothing can answer it.
            return Ok(failed(
                finished,
                call_ref,
                "the call waits, but not on anything",
            ));
        };
        let request = ApprovalRequest {
            session_id: session_id.clone(),
            call: call.clone(),
            suspension,
        };
        let cancelled_deny = || Resolution::Deny {
            reason: Some(CANCELLED_WHILE_WAITING.to_owned()),
        };
        let resolution = if cancel.is_cancelled() {
            cancelled_deny()
        } else {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => cancelled_deny(),
                r = approver.decide(&request) => r,
            }
        };
        let denied = matches!(
            resolution,
            Resolution::Deny { .. } | Resolution::Cancel { .. } | Resolution::Refuse { .. }
        );
        let resumed = tokio::select! {
            biased;
            // An approved call runs under the executor's own token; a cancel stops
            // waiting for it and drops its future, which stops the tool.
            _ = cancel.cancelled(), if !denied => {
                let interrupted = toolwire_runtime::interrupted(call_ref.clone());
                return Ok(Finished::elsewhere(session_id, interrupted).forgetting(ids));
            }
            r = self.executor.resume(finished, resolution) => r,
        };
        match resumed {
            Ok(next) => Ok(next),
            // Claimed by someone else (another instance, answered there): its result is
            // theirs to store; storing an error here would give the call a second result.
            Err(ResolveError::NotFound(claimed)) => {
                let ours = ids.into_iter().filter(|id| *id != claimed).collect();
                Err((claimed, ours))
            }
            Err(e) => Ok(Finished::elsewhere(
                session_id,
                ToolResult::error_with_code(
                    call_ref,
                    ErrorCode::SuspensionFailed,
                    format!("could not finish the suspended call: {e}"),
                ),
            )
            .forgetting(ids)),
        }
    }

    /// The result another instance stores for a call it claimed (`claimed`), once it is
    /// there; `ours` are the call's earlier suspensions, this instance's to forget. If
    /// nobody holds the claim any more and no result was stored (the other instance died
    /// mid-call), the call gets a `suspension_failed` result.
    async fn stored_elsewhere(
        &self,
        session_id: &str,
        call: &ToolCall,
        claimed: &str,
        ours: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<Option<Concluded>, LandError> {
        loop {
            // Read the claim before the history: a result stored and its row forgotten
            // between the two reads is then still found.
            let held = self
                .stores
                .suspensions()
                .suspensions(session_id)
                .await?
                .iter()
                .any(|p| p.suspension.id == claimed);
            if let Some(found) = self
                .stores
                .history()
                .find_result(session_id, &call.id)
                .await?
            {
                self.forget(&ours).await;
                return Ok(Some(Concluded::Stored(found)));
            }
            if !held {
                let lost = ToolResult::error_with_code(
                    CallRef::new(&call.id, &call.name),
                    ErrorCode::SuspensionFailed,
                    "the call was answered elsewhere, but no result was stored there",
                );
                let lost = Finished::elsewhere(session_id, lost).forgetting(ours);
                return Ok(Some(Concluded::Stored(
                    self.executor.land(lost, None).await?,
                )));
            }
            tokio::select! {
                () = cancel.cancelled() => {
                    self.forget(&ours).await;
                    return Ok(None);
                }
                () = tokio::time::sleep(ELSEWHERE_POLL) => {}
            }
        }
    }

    /// Forgets suspensions that are done with; a failure leaves a row that lists as
    /// resolving, which is harmless.
    async fn forget(&self, ids: &[String]) {
        for id in ids {
            let _ = self.executor.settled(id).await;
        }
    }
}

/// A call that cannot go on, ending with `why` in its place.
fn failed(mut finished: Finished, call: CallRef, why: &str) -> Finished {
    let ids = finished.take_suspensions();
    let session_id = finished.session_id().to_owned();
    drop(finished.into_result());
    let failed = ToolResult::error_with_code(call, ErrorCode::SuspensionFailed, why);
    Finished::elsewhere(session_id, failed).forgetting(ids)
}
