//! Progress of a call, passed on to the host: when the host's request carries a
//! `progressToken`, toolwire's `progress` events for that call (from the MCP server behind
//! it, or a built-in tool) become `notifications/progress`, coalesced so a chatty tool
//! cannot flood the host, and never going backwards (MCP requires progress to increase).

use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use toolwire_agent::Running;
use toolwire_core::EventKind;

/// At most one notification per this interval; the last one held back is sent at the end.
const COALESCE: Duration = Duration::from_millis(100);

/// Forwards `running`'s progress for `call_id` to `peer` under `token` until the call's
/// events end; the call's outcome is left for `finish`.
pub(crate) async fn forward<T>(
    running: &mut Running<T>,
    call_id: &str,
    peer: &Peer<RoleServer>,
    token: ProgressToken,
) {
    let mut last_sent: Option<Instant> = None;
    let mut high = None::<u64>;
    let mut held: Option<ProgressNotificationParam> = None;
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
        // u64 to f64 loses precision only past 2^53 steps, which no tool reports.
        #[allow(clippy::cast_precision_loss)]
        let mut note = ProgressNotificationParam::new(token.clone(), done as f64);
        #[allow(clippy::cast_precision_loss)]
        {
            note.total = total.map(|t| t as f64);
        }
        note.message = message;
        if last_sent.is_some_and(|at| at.elapsed() < COALESCE) {
            held = Some(note);
            continue;
        }
        held = None;
        last_sent = Some(Instant::now());
        // A host that went away is found out by the call's own end.
        let _ = peer.notify_progress(note).await;
    }
    if let Some(note) = held {
        let _ = peer.notify_progress(note).await;
    }
}
