//! Calls recorded behind their answers: for a caller that must answer at once (the MCP
//! gateway, whose host waits on every call), the call runs, its settled result goes back,
//! and the call and its result are stored afterwards, in order, the results queued
//! meanwhile together (two commits a batch, not four fsyncs a call). Nothing is lost on a
//! clean end: [`Recorder::flush`] waits until everything recorded before it is stored.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};
use toolwire_core::{ToolCall, ToolResult};
use toolwire_runtime::{Executor, Finished, LandError};
use toolwire_store::{StoreError, StoredResult, has_inline_media};

use super::Host;
use crate::drive::Concluded;

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
        /// The finished call (it knows its session).
        finished: Finished,
        /// The call, when it was not stored as it started.
        call: Option<ToolCall>,
        /// Told the result as stored, for a caller that waits for it.
        stored: Option<oneshot::Sender<Result<StoredResult, LandError>>>,
    },
    Flush(oneshot::Sender<()>),
}

impl Job {
    /// Whether nobody waits for this job's landing (see [`LINGER`]).
    fn unawaited(&self) -> bool {
        matches!(self, Job::Land { stored: None, .. })
    }
}

/// The recorder's task is gone: nothing can store what it is given.
fn stopped() -> LandError {
    LandError::Store(StoreError::WriterGone)
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

    /// Queues a settled call to be stored behind its answer, after everything recorded
    /// before it; `call` is stored with it when it was not stored as it started. The
    /// answer is the result as it is, except for one with media or a large one, which
    /// is waited for as stored (the answer names the stored media; a large one must not
    /// sit in the queue).
    pub(crate) async fn land_behind(
        &self,
        finished: Finished,
        call: Option<ToolCall>,
    ) -> Result<Concluded, LandError> {
        if has_inline_media(finished.result()) || is_large(finished.result()) {
            let (stored, landed) = oneshot::channel();
            self.record(Job::Land {
                finished,
                call,
                stored: Some(stored),
            })
            .await?;
            let stored = landed.await.map_err(|_| stopped())??;
            return Ok(Concluded::Stored(stored));
        }
        let result = finished.result().clone();
        self.record(Job::Land {
            finished,
            call,
            stored: None,
        })
        .await?;
        Ok(Concluded::Queued(result))
    }

    async fn record(&self, job: Job) -> Result<(), LandError> {
        self.jobs.send(job).await.map_err(|_| stopped())
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
                    finished,
                    call,
                    stored,
                } => {
                    if batch
                        .first()
                        .is_some_and(|(first, _, _)| first.session_id() != finished.session_id())
                    {
                        land(&executor, std::mem::take(&mut batch), &lost).await;
                    }
                    batch.push((finished, call, stored));
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
    Finished,
    Option<ToolCall>,
    Option<oneshot::Sender<Result<StoredResult, LandError>>>,
);

/// Lands one session's queued calls together.
async fn land(executor: &Executor, batch: Vec<LandJob>, lost: &AtomicU64) {
    let Some(session_id) = batch.first().map(|job| job.0.session_id().to_owned()) else {
        return;
    };
    let mut waiting = Vec::with_capacity(batch.len());
    let finished = batch
        .into_iter()
        .map(|(finished, call, stored)| {
            waiting.push(stored);
            (call, finished)
        })
        .collect();
    let landed = executor.land_many(&session_id, finished).await;
    for (landed, stored) in landed.into_iter().zip(waiting) {
        if landed.is_err() {
            lost.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(stored) = stored {
            let _ = stored.send(landed);
        }
    }
}

impl Host {
    /// A recorder for calls stored behind their answers ([`CallOptions::recorded`](super::CallOptions::recorded)): its
    /// task stores what it is given until every clone of it is dropped.
    pub fn recorder(&self) -> Recorder {
        Recorder::start(Arc::clone(&self.executor))
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
