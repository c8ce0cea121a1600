//! Calls recorded behind their answers: for a caller that must answer at once (the MCP
//! gateway, whose host waits on every call), the call runs, its settled result goes back,
//! and the call and its result are stored afterwards, in order, the results queued
//! meanwhile together (two commits a batch, not four fsyncs a call). Nothing is lost on a
//! clean end: [`Recorder::flush`] waits until everything recorded before it is stored.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};
use toolwire_core::{Message, Status, ToolCall, ToolResult};
use toolwire_runtime::Executor;
use toolwire_store::has_inline_media;

use super::{CallScope, Host, HostError, Running};
use crate::Approver;
use crate::approval::{Settled, settle, store_settled};

/// Calls waiting to be stored at most; a caller that gets further ahead waits (so a
/// slow disk slows the calls instead of growing memory without end).
const QUEUE: usize = 256;

/// A result this large (bytes of its values' text) is stored before it is answered, so
/// the queue holds at most `QUEUE` small results, never hundreds of megabytes.
const LARGE: usize = 256 << 10;

/// Calls stored in one batch at most.
const MAX_BATCH: usize = 256;

/// How long a batch nobody waits for is held for more calls to share its commit. Each
/// commit is several statements, each a round trip to SQLite's worker thread and a few
/// pages written to the log; one call at a time (a host's sequential calls, a few hundred
/// microseconds apart) paid all of that per call. A call's result reaches the history
/// (and `serve`'s live view) at most this much later; a flush, a suspension and a result
/// that is answered as stored (media, large) are never held.
const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// Stores calls behind their answers, in the order they were recorded. Cloning shares it.
#[derive(Debug, Clone)]
pub struct Recorder {
    jobs: mpsc::Sender<Job>,
    /// Records that could not be stored (even as a `store_failed` result): the store
    /// itself failed.
    lost: Arc<AtomicU64>,
}

// Nearly every job is a `Land`; boxing it to shrink the rare `Flush` would cost an
// allocation per call for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Job {
    Land {
        session_id: String,
        /// The call, when it was not stored as it started.
        call: Option<ToolCall>,
        result: ToolResult,
        suspensions: Vec<String>,
        /// Told the result as stored, for a caller that waits for it.
        stored: Option<oneshot::Sender<Result<ToolResult, HostError>>>,
    },
    Flush(oneshot::Sender<()>),
}

impl Job {
    /// Whether nobody waits for this job's landing (see [`LINGER`]).
    fn unawaited(&self) -> bool {
        matches!(self, Job::Land { stored: None, .. })
    }
}

impl Recorder {
    fn start(executor: Arc<Executor>) -> Recorder {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let lost = Arc::new(AtomicU64::new(0));
        tokio::spawn(run(executor, queue, Arc::clone(&lost)));
        Recorder { jobs, lost }
    }

    /// Waits until everything recorded before this call is stored (or found unstorable).
    pub async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.jobs.send(Job::Flush(done)).await.is_ok() {
            let _ = flushed.await;
        }
    }

    /// How many records could not be stored at all since the recorder started.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    async fn record(&self, job: Job) -> Result<(), HostError> {
        self.jobs
            .send(job)
            .await
            .map_err(|_| HostError::Aborted("the recorder stopped".into()))
    }
}

/// Lands the queued calls in batches, in order; a flush is answered once everything
/// queued before it has landed.
async fn run(executor: Arc<Executor>, mut queue: mpsc::Receiver<Job>, lost: Arc<AtomicU64>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        let deadline = tokio::time::Instant::now() + LINGER;
        while jobs.len() < MAX_BATCH && jobs.iter().all(Job::unawaited) {
            let room = MAX_BATCH - jobs.len();
            match tokio::time::timeout_at(deadline, queue.recv_many(&mut jobs, room)).await {
                Ok(received) if received > 0 => {}
                // The deadline, or every recorder dropped: land what there is.
                _ => break,
            }
        }
        let mut batch: Vec<LandJob> = Vec::new();
        for job in jobs.drain(..) {
            match job {
                Job::Land {
                    session_id,
                    call,
                    result,
                    suspensions,
                    stored,
                } => {
                    if batch.first().is_some_and(|first| first.0 != session_id) {
                        land(&executor, std::mem::take(&mut batch), &lost).await;
                    }
                    batch.push((session_id, call, result, suspensions, stored));
                }
                Job::Flush(done) => {
                    land(&executor, std::mem::take(&mut batch), &lost).await;
                    let _ = done.send(());
                }
            }
        }
        land(&executor, batch, &lost).await;
    }
}

type LandJob = (
    String,
    Option<ToolCall>,
    ToolResult,
    Vec<String>,
    Option<oneshot::Sender<Result<ToolResult, HostError>>>,
);

/// Lands one session's queued calls together.
async fn land(executor: &Executor, batch: Vec<LandJob>, lost: &AtomicU64) {
    let Some(session_id) = batch.first().map(|job| job.0.clone()) else {
        return;
    };
    let mut waiting = Vec::with_capacity(batch.len());
    let finished = batch
        .into_iter()
        .map(|(_, call, result, suspensions, stored)| {
            waiting.push(stored);
            (call, result, suspensions)
        })
        .collect();
    let landed = executor.land_many(&session_id, finished).await;
    for (landed, stored) in landed.into_iter().zip(waiting) {
        let outcome = match landed {
            Ok(message) => match message.content {
                Message::ToolResult(result) => Ok(result),
                _ => Err(HostError::Aborted(
                    "the store returned a message that is not a tool result".into(),
                )),
            },
            Err(e) => {
                lost.fetch_add(1, Ordering::Relaxed);
                Err(HostError::from(e))
            }
        };
        if let Some(stored) = stored {
            let _ = stored.send(outcome);
        }
    }
}

impl Host {
    /// A recorder for [`Host::call_recorded`]: its task stores what it is given until
    /// every clone of it is dropped.
    pub fn recorder(&self) -> Recorder {
        Recorder::start(Arc::clone(&self.executor))
    }

    /// [`Host::call_cancellable`] for a caller that answers before the call is stored:
    /// the outcome is the settled result, and `recorder` stores the call and its result
    /// behind it, in order ([`Recorder::flush`] waits for that). A result with media
    /// comes back as stored (its media in the blob store, which the answer links to),
    /// and a call that must ask a person is stored before it asks. `events`: whether
    /// the caller will read the call's events ([`Running::next`]).
    pub async fn call_recorded(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: Arc<dyn Approver>,
        scope: impl Into<CallScope>,
        recorder: &Recorder,
        events: bool,
    ) -> Result<Running<ToolResult>, HostError> {
        let scope = scope.into();
        let host = self.clone();
        let session = session_id.to_owned();
        let call_id = call.id.clone();
        let recorder = recorder.clone();
        let work = Box::pin(async move {
            host.finish_recorded(&session, call, approver.as_ref(), scope, &recorder)
                .await
        });
        let running = self.run_with(session_id, work, events).await?;
        Ok(running.for_call(call_id))
    }

    async fn finish_recorded(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: &dyn Approver,
        scope: CallScope,
        recorder: &Recorder,
    ) -> Result<ToolResult, HostError> {
        let cancel = scope.cancel.clone();
        // The executor may fill the input in (a left-out optional field); the call is
        // stored as it was made, so it gets its own copy.
        let result = self
            .executor
            .execute(&scope.executor_scope(session_id), call.clone())
            .await;
        let stored_first = result.status == Status::Suspended;
        // A call that asks nobody is settled as it is. The rest is boxed: this future is
        // moved whole into its task, so its size is what the common path needs.
        let (settled, suspended) = if stored_first {
            Box::pin(async {
                // A person will be asked (maybe elsewhere, through the web app): the call
                // is in the history first, after everything recorded before it.
                recorder.flush().await;
                self.stores
                    .append(session_id, Message::assistant("", vec![call.clone()]))
                    .await?;
                Ok::<_, HostError>(
                    settle(&self.executor, approver, session_id, &call, result, &cancel).await,
                )
            })
            .await?
        } else {
            (Settled::Here(Box::new(result)), Vec::new())
        };
        let result = match settled {
            Settled::Here(result) => *result,
            elsewhere @ Settled::Elsewhere(_) => {
                // Answered on another instance, which stores the result: waited for here
                // as by `Host::call`.
                let never = tokio_util::sync::CancellationToken::new();
                let stored = Box::pin(store_settled(
                    &self.executor,
                    &self.stores,
                    session_id,
                    &call,
                    elsewhere,
                    suspended,
                    &never,
                ))
                .await?
                .ok_or_else(|| HostError::Aborted("the call was cancelled".into()))?;
                return match stored.content {
                    Message::ToolResult(result) => Ok(result),
                    _ => Err(HostError::Aborted(
                        "the store returned a message that is not a tool result".into(),
                    )),
                };
            }
        };
        // Not needed past here but to be stored: moved, not copied.
        let unstored = (!stored_first).then_some(call);
        if has_inline_media(&result) || is_large(&result) {
            // The answer names the stored media (or the result is too large to hold in
            // the queue): wait for it.
            let (stored, landed) = oneshot::channel();
            recorder
                .record(Job::Land {
                    session_id: session_id.to_owned(),
                    call: unstored,
                    result,
                    suspensions: suspended,
                    stored: Some(stored),
                })
                .await?;
            return landed
                .await
                .map_err(|_| HostError::Aborted("the recorder stopped".into()))?;
        }
        recorder
            .record(Job::Land {
                session_id: session_id.to_owned(),
                call: unstored,
                result: result.clone(),
                suspensions: suspended,
                stored: None,
            })
            .await?;
        Ok(result)
    }
}

/// Whether `result`'s values hold at least [`LARGE`] bytes of text.
fn is_large(result: &ToolResult) -> bool {
    fn size(value: &serde_json::Value, budget: &mut usize) {
        use serde_json::Value as Json;
        match value {
            Json::String(text) => *budget = budget.saturating_sub(text.len()),
            Json::Array(items) => {
                for item in items {
                    if *budget == 0 {
                        return;
                    }
                    size(item, budget);
                }
            }
            Json::Object(map) => {
                for (key, item) in map {
                    if *budget == 0 {
                        return;
                    }
                    *budget = budget.saturating_sub(key.len());
                    size(item, budget);
                }
            }
            _ => *budget = budget.saturating_sub(8),
        }
    }
    let mut budget = LARGE;
    for value in &result.output {
        size(&value.data, &mut budget);
        if budget == 0 {
            return true;
        }
    }
    false
}
