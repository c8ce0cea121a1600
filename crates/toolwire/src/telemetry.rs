//! The process's OpenTelemetry exporter, started from the `OTEL_*` variables for any
//! command and handed to every host it builds; its queued spans are sent at exit.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use toolwire_otel::Otel;

static OTEL: OnceLock<Otel> = OnceLock::new();

/// How long the process waits at exit for the collector to take the last spans.
const FLUSH_WITHIN: Duration = Duration::from_secs(3);

/// Starts exporting when the environment asks for it. Variables it cannot follow are
/// reported and tracing stays off: telemetry must not stop the command itself.
pub(crate) fn start() {
    match Otel::from_env() {
        Ok(Some(otel)) => {
            let _ = OTEL.set(otel);
        }
        Ok(None) => {}
        Err(e) => crate::out::eprintln(&format!("warning: tracing is off: {e}")),
    }
}

/// The tracer hosts use, when tracing is on.
pub(crate) fn tracer() -> Option<Arc<dyn toolwire_runtime::trace::Tracer>> {
    OTEL.get().map(Otel::tracer)
}

/// Sends the queued spans; says so when some were lost.
pub(crate) async fn finish() {
    let Some(otel) = OTEL.get() else { return };
    let stats = otel.shutdown(FLUSH_WITHIN).await;
    if stats.failed + stats.dropped > 0 || stats.last_error.is_some() {
        let lost = stats.failed + stats.dropped;
        let why = stats.last_error.unwrap_or_default();
        crate::out::eprintln(&format!(
            "warning: traces: {lost} span(s) not exported, {} sent; {why}",
            stats.exported
        ));
    }
}
