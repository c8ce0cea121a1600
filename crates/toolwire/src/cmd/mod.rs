//! One module per subcommand.

pub(crate) mod call;
pub(crate) mod chat;
pub(crate) mod export;
pub(crate) mod gc;
pub(crate) mod migrate;
pub(crate) mod normalize;
pub(crate) mod render;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod sessions;
pub(crate) mod show;
pub(crate) mod tools;
pub(crate) mod validate;

use toolwire_core::EventKind;
use toolwire_term::LiveRenderer;

use crate::approve::summarize;

/// Draws a running call's progress (`call` and `chat` alike): its start line and progress
/// bar. Returns false for events the caller draws itself.
fn draw_call_progress(live: &LiveRenderer, kind: &EventKind) -> bool {
    match kind {
        EventKind::ToolCallStarted {
            call_id,
            tool_name,
            input,
        } => live.call_started(call_id, tool_name, &summarize(input)),
        EventKind::Progress {
            call_id,
            done,
            total,
            message,
        } => live.progress(call_id, *done, *total, message.as_deref()),
        _ => return false,
    }
    true
}
