//! Work running in the background, with its session's events, in order.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use toolwire_core::Event;
use toolwire_runtime::{EventBus, Subscription};

use super::{Host, HostError};

/// How long, once the work is done, to wait for an event it logged to arrive.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Work running in the background and the events of its session, in order: `next` until
/// `None`, then [`Running::finish`] for the outcome. The events are read only when asked
/// for: a caller that only wants the outcome calls `finish` and nothing subscribes.
pub struct Running<T> {
    /// Opened by the first `next`, from the number the work started at: nothing logged
    /// in between is missed.
    subscription: Option<Subscription>,
    events: Arc<EventBus>,
    session_id: String,
    /// The call's id, for a run of one call.
    call_id: Option<String>,
    task: Option<JoinHandle<Result<T, HostError>>>,
    /// The outcome, once the work ended, and the last event number it logged.
    done: Option<(Result<T, HostError>, u64)>,
    seen: u64,
}

impl<T> std::fmt::Debug for Running<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id)
            .field("seen", &self.seen)
            .field("done", &self.done.is_some())
            .finish()
    }
}

/// A task's end as the work's outcome: a panic or an abort becomes `Stopped`.
fn outcome<T>(ended: Result<Result<T, HostError>, tokio::task::JoinError>) -> Result<T, HostError> {
    ended.map_err(|e| HostError::Stopped(e.to_string()))?
}

impl<T> Running<T> {
    /// The run of one call, `call_id`.
    pub(super) fn for_call(mut self, call_id: String) -> Self {
        self.call_id = Some(call_id);
        self
    }

    /// The session the run works in.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The id of the call this runs ([`Host::run_call`]); `None` for a turn.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The next event of the session; `None` once the work has ended and every event
    /// it logged was delivered.
    pub async fn next(&mut self) -> Option<Event> {
        if self.seen == u64::MAX {
            // Started without events ([`super::CallOptions::without_events`]).
            return None;
        }
        if self.subscription.is_none() {
            match self.events.subscribe(&self.session_id, self.seen).await {
                Ok(subscription) => self.subscription = Some(subscription),
                // The log cannot be read: no events, the outcome still comes.
                Err(_) => {
                    if let Some(task) = self.task.take() {
                        self.done = Some((outcome(task.await), self.seen));
                    }
                    return None;
                }
            }
        }
        let subscription = self.subscription.as_mut()?;
        loop {
            if let Some((_, last)) = &self.done {
                if self.seen >= *last {
                    return None;
                }
                return match tokio::time::timeout(DRAIN_WAIT, subscription.next()).await {
                    Ok(Some(Ok(event))) => {
                        self.seen = event.seq;
                        Some(event)
                    }
                    _ => None,
                };
            }
            let task = self.task.as_mut()?;
            tokio::select! {
                ended = task => {
                    self.task = None;
                    let last = self.events.last_seq(&self.session_id).await.unwrap_or(self.seen);
                    self.done = Some((outcome(ended), last));
                }
                event = subscription.next() => match event {
                    Some(Ok(event)) => {
                        self.seen = event.seq;
                        return Some(event);
                    }
                    // The log failed or the bus is gone: the outcome still comes.
                    Some(Err(_)) | None => {
                        if let Some(task) = self.task.take() {
                            self.done = Some((outcome(task.await), self.seen));
                        }
                    }
                },
            }
        }
    }

    /// Waits for the work to end and returns its outcome; events not yet taken are left.
    pub async fn finish(mut self) -> Result<T, HostError> {
        if let Some((outcome, _)) = self.done.take() {
            return outcome;
        }
        match self.task.take() {
            Some(task) => outcome(task.await),
            None => Err(HostError::AlreadyFinished),
        }
    }
}

impl Host {
    /// Runs `work` as its own task; the session's events from now on are delivered to
    /// whoever asks for them ([`Running::next`]).
    pub(super) async fn run<T: Send + 'static>(
        &self,
        session_id: &str,
        work: impl Future<Output = Result<T, HostError>> + Send + 'static,
    ) -> Result<Running<T>, HostError> {
        self.run_with(session_id, Box::pin(work), true).await
    }

    /// [`Host::run`]; without `events`, the caller will not read them, and the log is
    /// not asked where they start ([`Running::next`] then gives none).
    pub(super) async fn run_with<T: Send + 'static>(
        &self,
        session_id: &str,
        // Boxed where it is made: a call's future is tens of kilobytes (the executor, the
        // tool, the store), and tokio copies a spawned future's whole size several times
        // on its way into the task and again when the task finishes (callgrind of the
        // gateway: a fifth of its instructions were those copies).
        work: futures::future::BoxFuture<'static, Result<T, HostError>>,
        events: bool,
    ) -> Result<Running<T>, HostError> {
        let from = if events {
            self.events().last_seq(session_id).await?
        } else {
            // Nothing is read from here: `next` ends at once.
            u64::MAX
        };
        let events = self.events();
        Ok(Running {
            subscription: None,
            events: Arc::clone(events),
            session_id: session_id.to_owned(),
            call_id: None,
            task: Some(tokio::spawn(work)),
            done: None,
            seen: from,
        })
    }
}
