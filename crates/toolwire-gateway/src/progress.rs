//! Progress of a call, passed on to the host: when the host's request carries a
//! `progressToken`, toolwire's `progress` events for that call (from the MCP server behind
//! it, or a built-in tool) become `notifications/progress`, coalesced so a chatty tool
//! cannot flood the host, and never going backwards (MCP requires progress to increase).
//! A 2026-07-28 call that asks its host mid-way outlives the request that started it, so
//! its progress is kept as the latest step (`Latest`) and each round's request passes it
//! on under that request's own token (rounds.rs).

use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::watch;
use toolwire_agent::Running;
use toolwire_core::EventKind;

/// At most one notification per this interval; the last one held back is sent at the end.
const COALESCE: Duration = Duration::from_millis(100);

/// One step of a call's progress, without the token of the request it goes to.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    done: u64,
    total: Option<u64>,
    message: Option<String>,
}

impl Step {
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

/// Where a call's coalesced progress goes.
pub(crate) enum To<'a> {
    /// The host's request that waits for the call, under its token.
    Host(&'a Peer<RoleServer>, ProgressToken),
    /// The latest step, read by each round of a 2026-07-28 call (rounds.rs).
    Latest(watch::Sender<Option<Step>>),
}

impl To<'_> {
    async fn send(&self, step: Step) {
        match self {
            // A host that went away is found out by the call's own end.
            To::Host(peer, token) => {
                let _ = peer.notify_progress(step.note(token)).await;
            }
            To::Latest(latest) => {
                latest.send_replace(Some(step));
            }
        }
    }
}

/// Forwards `running`'s progress for `call_id` to `to` until the call's events end; the
/// call's outcome is left for `finish`.
pub(crate) async fn forward<T>(running: &mut Running<T>, call_id: &str, to: To<'_>) {
    let mut last_sent: Option<Instant> = None;
    let mut high = None::<u64>;
    let mut held: Option<Step> = None;
    while let Some(event) = running.next().await {
        let EventKind::Progress {
            call_id: of,
            done,
            total,
            message,
        } = event.kind
        else {
            continue;
        };
        if of != call_id || high.is_some_and(|h| done <= h) {
            continue;
        }
        high = Some(done);
        let step = Step {
            done,
            total,
            message,
        };
        if last_sent.is_some_and(|at| at.elapsed() < COALESCE) {
            held = Some(step);
            continue;
        }
        held = None;
        last_sent = Some(Instant::now());
        to.send(step).await;
    }
    if let Some(step) = held {
        to.send(step).await;
    }
}
