//! Progress of a call, passed on to the host: when the host's request carries a
//! `progressToken`, the call's progress (from the MCP server behind it, or a built-in
//! tool) becomes `notifications/progress` as it is reported, coalesced once by the
//! executor so a chatty tool cannot flood the host, never waiting for the event log, and
//! never going backwards (MCP requires progress to increase).
//! A 2026-07-28 call that asks its host mid-way outlives the request that started it, so
//! its progress is kept as the latest step (`Latest`) and each round's request passes it
//! on under that request's own token (rounds.rs).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::watch;
use toolwire_tool::ProgressSink;

/// One step of a call's progress, without the token of the request it goes to.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    done: u64,
    total: Option<u64>,
    message: Option<String>,
}

impl Step {
    /// The step in words, for a task's status message.
    fn said(self) -> String {
        match (self.message, self.total) {
            (Some(message), _) => message,
            (None, Some(total)) => format!("{} of {total}", self.done),
            (None, None) => format!("{} done", self.done),
        }
    }

    /// The notification of this step under `token`.
    pub(crate) fn note(&self, token: &ProgressToken) -> ProgressNotificationParam {
        // u64 to f64 loses precision only past 2^53 steps, which no tool reports.
        #[allow(clippy::cast_precision_loss)]
        let mut note = ProgressNotificationParam::new(token.clone(), self.done as f64);
        #[allow(clippy::cast_precision_loss)]
        {
            note.total = self.total.map(|t| t as f64);
        }
        note.message.clone_from(&self.message);
        note
    }
}

/// A call's latest progress step, for whichever request of the host is current.
pub(crate) type Latest = watch::Receiver<Option<Step>>;

/// Where a call's progress goes.
pub(crate) enum To {
    /// The host's request that waits for the call, under its token.
    Host(Peer<RoleServer>, ProgressToken),
    /// The latest step, read by each round of a 2026-07-28 call (rounds.rs).
    Latest(watch::Sender<Option<Step>>),
    /// A task's status message (tasks.rs).
    Status(Box<dyn Fn(String) + Send + Sync>),
}

/// A call's progress tap ([`toolwire_agent::CallScope::progress`]): the executor tells it
/// each report as it is made, coalesced once, without waiting for the event log; it
/// passes each on to `to`, never going backwards.
pub(crate) struct Tap {
    to: To,
    high: Mutex<Option<u64>>,
}

impl Tap {
    pub(crate) fn to(to: To) -> Arc<dyn ProgressSink> {
        Arc::new(Tap {
            to,
            high: Mutex::new(None),
        })
    }
}

impl ProgressSink for Tap {
    fn progress(
        &self,
        _session_id: &str,
        _call_id: &str,
        done: u64,
        total: Option<u64>,
        message: Option<&str>,
    ) -> BoxFuture<'static, ()> {
        // MCP requires progress to increase: a step at or below the last one is dropped.
        if let Ok(mut high) = self.high.lock() {
            if high.is_some_and(|h| done <= h) {
                return Box::pin(async {});
            }
            *high = Some(done);
        }
        let step = Step {
            done,
            total,
            message: message.map(str::to_owned),
        };
        match &self.to {
            To::Host(peer, token) => {
                let (peer, note) = (peer.clone(), step.note(token));
                // A host that went away is found out by the call's own end.
                Box::pin(async move {
                    let _ = peer.notify_progress(note).await;
                })
            }
            To::Latest(latest) => {
                latest.send_replace(Some(step));
                Box::pin(async {})
            }
            To::Status(set) => {
                set(step.said());
                Box::pin(async {})
            }
        }
    }
}
