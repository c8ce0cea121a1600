//! Where a finished call lands: one seam, so that "store the result, announce it, forget
//! its suspensions" is written once for every caller (the agent loop, a person's call,
//! an answer to a pending call, and the entry points to come).
//!
//! With a sink, the executor announces only calls that wait (suspended results); a
//! finished result is announced by the sink *after* it is stored, as stored (media as
//! blob references), so a client that reloads on the event always finds it.

use futures::future::BoxFuture;
use serde_json::Value as Json;
use toolwire_core::{ToolCall, ToolResult};
use toolwire_store::{StoreError, StoredResult};

/// A finished call on its way to the store.
#[derive(Debug)]
pub struct Landing {
    /// The call's one result, as the model and the history will see it.
    pub result: ToolResult,
    /// The raw payload the tool returned, when the executor is debugging (`debug_raw`):
    /// it rides along in the announcement only.
    pub raw: Option<Json>,
    /// The raw payload's JSON text (an MCP result as received), to store beside the
    /// result: kept when it is within the executor's `raw_limit`.
    pub raw_text: Option<Vec<u8>>,
    /// The call's suspensions, done with once the result is stored.
    pub suspensions: Vec<String>,
    /// The call itself, when it was not stored as it started (a call recorded behind its
    /// answer, as the MCP gateway's): stored just before its result, in the same write.
    pub call: Option<ToolCall>,
}

/// Stores a call's one result, then announces it and forgets its suspensions.
pub trait ResultSink: Send + Sync {
    /// The result as stored. A result the store refuses becomes the `store_failed` one
    /// it stores instead: every call keeps exactly one result.
    fn land<'a>(
        &'a self,
        session_id: &'a str,
        landing: Landing,
    ) -> BoxFuture<'a, Result<StoredResult, StoreError>>;

    /// Lands several results of one session, in order; a sink may store them in one
    /// write. Each gets its own outcome, as from [`ResultSink::land`].
    fn land_many<'a>(
        &'a self,
        session_id: &'a str,
        landings: Vec<Landing>,
    ) -> BoxFuture<'a, Vec<Result<StoredResult, StoreError>>> {
        Box::pin(land_each(self, session_id, landings))
    }
}

/// Lands `landings` one after another through [`ResultSink::land`], in order: what a sink
/// without a batched write does, and a batched write's fallback when the batch fails.
pub async fn land_each<S: ResultSink + ?Sized>(
    sink: &S,
    session_id: &str,
    landings: Vec<Landing>,
) -> Vec<Result<StoredResult, StoreError>> {
    let mut landed = Vec::with_capacity(landings.len());
    for landing in landings {
        landed.push(sink.land(session_id, landing).await);
    }
    landed
}

/// Why [`crate::Executor::land`] could not land a result.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum LandError {
    /// No sink was set, so nothing can store the result.
    #[error("the executor has no result sink: results cannot be stored")]
    NoSink,
    /// The call still waits for a person: it lands once it is answered.
    #[error("call {0:?} still waits for a person: it cannot be stored before it is answered")]
    StillWaiting(String),
    /// A batch of one session's calls held a call of another session.
    #[error("a call of session {0:?} cannot land in another session's batch")]
    OtherSession(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
