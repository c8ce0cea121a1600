//! The one driver of a call outside a turn: [`Host::run_call`] runs it, asks while it
//! waits, and lands it, for the CLI, the web API, both gateway revisions and gateway
//! tasks; and answers to calls that wait with nobody waiting on them.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolwire_core::{Message, Resolution, ToolCall, ToolResult};
use toolwire_runtime::Finished;
use toolwire_store::StoredResult;

use super::{CallScope, Host, HostError, Recorder, Running};
use crate::Approver;
use crate::drive::{Driver, Land};

/// How [`Host::run_call`] drives a call: who answers it while it waits, what stops it,
/// and when it is stored.
#[derive(Clone)]
pub struct CallOptions {
    /// Asked while the call waits for a person.
    pub approver: Arc<dyn Approver>,
    /// What stops the call (while it runs or waits for a person; either way it gets its
    /// one stored result, a `cancelled` error), and the caller's trace.
    pub scope: CallScope,
    /// Store the call and its result behind the answer, through this recorder (for a
    /// caller that must answer at once, as the MCP gateway); `None` stores the call as
    /// it starts and its result before the answer.
    pub recorder: Option<Recorder>,
    /// Whether the caller reads the call's events ([`Running::next`]).
    pub events: bool,
    /// Approved already: a tool that asks for approval runs without asking
    /// ([`CallOptions::approved`]).
    pub approved: bool,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("scope", &self.scope)
            .field("recorded", &self.recorder.is_some())
            .field("events", &self.events)
            .field("approved", &self.approved)
            .finish_non_exhaustive()
    }
}

impl CallOptions {
    /// Stored as it starts, answered by `approver`, with its events, never cancelled.
    pub fn new(approver: Arc<dyn Approver>) -> Self {
        CallOptions {
            approver,
            scope: CallScope::default(),
            recorder: None,
            events: true,
            approved: false,
        }
    }

    /// Approved already by whoever asks for it: a tool whose policy asks for approval
    /// runs without suspending (see [`toolwire_runtime::Executor::execute_approved`]);
    /// what the tool asks while it runs still goes to the approver.
    pub fn approved(mut self) -> Self {
        self.approved = true;
        self
    }

    /// Stopped by `scope`'s token (a bare [`CancellationToken`] is a scope too).
    pub fn scope(mut self, scope: impl Into<CallScope>) -> Self {
        self.scope = scope.into();
        self
    }

    /// Stored behind its answer by `recorder` ([`Recorder::flush`] waits for that). A
    /// result with media comes back as stored (its media in the blob store, which the
    /// answer links to), and a call that must ask a person is stored before it asks.
    pub fn recorded(mut self, recorder: &Recorder) -> Self {
        self.recorder = Some(recorder.clone());
        self
    }

    /// For a caller that will not read the call's events.
    pub fn without_events(mut self) -> Self {
        self.events = false;
        self
    }
}

impl Host {
    /// Runs `call` in `session_id` and lands its one result, whatever happens: the one
    /// way a call outside a turn is made. A call a person asked for says so
    /// ([`ToolCall::by_person`]), so the history pairs it with its result like any model
    /// turn and tells who made it. A suspended call is put to the options' approver
    /// until it ends.
    pub async fn run_call(
        &self,
        session_id: &str,
        call: ToolCall,
        options: CallOptions,
    ) -> Result<Running<ToolResult>, HostError> {
        if options.recorder.is_none() {
            // Stored as what it is: a call, with who made it if a person did, not as
            // words a person never typed; the model's view tells the model so.
            self.stores
                .append(session_id, Message::assistant("", vec![call.clone()]))
                .await?;
        }
        let call_id = call.id.clone();
        let events = options.events;
        let work = self.driven(session_id, call, options);
        let running = self.run_with(session_id, work, events).await?;
        Ok(running.for_call(call_id))
    }

    /// The call's drive, boxed where it is made (the run's task holds it whole), in a
    /// function of its own and not in `run_call`'s body: there the unboxed future was a
    /// temporary of `run_call`'s own future, which carried its ~13 KB to every caller's
    /// future (each copied whole on its way into a box or a task).
    fn driven(
        &self,
        session_id: &str,
        call: ToolCall,
        options: CallOptions,
    ) -> futures::future::BoxFuture<'static, Result<ToolResult, HostError>> {
        let host = self.clone();
        let session = session_id.to_owned();
        Box::pin(async move { host.drive(&session, call, options).await })
    }

    /// Runs, settles and lands one call, as its options say.
    async fn drive(
        &self,
        session_id: &str,
        call: ToolCall,
        options: CallOptions,
    ) -> Result<ToolResult, HostError> {
        let CallOptions {
            approver,
            scope,
            recorder,
            approved,
            ..
        } = options;
        let cancel = scope.cancel.clone();
        // The executor may fill the input in (a left-out optional field); the call is
        // stored as it was made, so it gets its own copy.
        let executor_scope = scope.executor_scope(session_id);
        let finished = if approved {
            self.executor
                .execute_approved(&executor_scope, call.clone())
                .await
        } else {
            self.executor.execute(&executor_scope, call.clone()).await
        };
        let land = match &recorder {
            None => Land::Now,
            // A person will be asked (maybe elsewhere, through the web app): the call is
            // in the history first, after everything recorded before it.
            Some(recorder) if finished.is_suspended() => {
                Box::pin(async {
                    recorder.flush().await;
                    self.stores
                        .append(session_id, Message::assistant("", vec![call.clone()]))
                        .await
                })
                .await?;
                Land::Behind {
                    recorder,
                    store_call: false,
                }
            }
            Some(recorder) => Land::Behind {
                recorder,
                store_call: true,
            },
        };
        // A call answered on another instance: its stored result is this call's. That
        // wait is never cancelled, so there always is one.
        let never = CancellationToken::new();
        let driver = Driver {
            executor: &self.executor,
            stores: &self.stores,
        };
        let concluded = driver
            .conclude(call, finished, approver.as_ref(), &cancel, &never, land)
            .await?
            .ok_or(HostError::Cancelled)?;
        Ok(concluded.into_result())
    }

    /// Lands the result of a call that ran outside toolwire (an AG-UI agent's tool, a
    /// payload given to `toolwire normalize --store`) like any other: media to blobs,
    /// `raw` (the payload as received) kept beside it, stored, announced as stored.
    /// Returns it as stored.
    pub async fn land_elsewhere(
        &self,
        session_id: &str,
        result: ToolResult,
        raw: Option<Vec<u8>>,
    ) -> Result<StoredResult, HostError> {
        let mut finished = Finished::elsewhere(session_id, result);
        if let Some(raw) = raw {
            finished = finished.keeping_raw(raw);
        }
        Ok(self.executor.land(finished, None).await?)
    }

    /// Answers a pending call that no running turn or call is waiting on (the process
    /// that suspended it ended, or nobody was asked): the call is finished through the
    /// executor and its result landed, once. A call that suspends again (an MCP server's
    /// second question) is returned suspended and stays pending under its new id.
    pub async fn resolve_pending(
        &self,
        session_id: &str,
        suspension_id: &str,
        resolution: Resolution,
    ) -> Result<ToolResult, HostError> {
        // The id must be one of this session's, so a caller cannot answer another's.
        let listed = self.executor.pending(session_id).await?;
        if !listed.iter().any(|p| p.suspension.id == suspension_id) {
            return Err(toolwire_runtime::ResolveError::NotFound(suspension_id.to_owned()).into());
        }
        let finished = self.executor.resolve(suspension_id, resolution).await?;
        if finished.is_suspended() {
            // Pending again under its new suspension; the answered one is done with.
            let _ = self.executor.settled(suspension_id).await;
            return Ok(finished.into_result());
        }
        Ok(self.executor.land(finished, None).await?.result)
    }
}
