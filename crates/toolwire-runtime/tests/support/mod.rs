//! What the executor's tests share: a sink for an executor without a store.
#![allow(clippy::unwrap_used, dead_code)]

use std::sync::Arc;

use toolwire_core::EventKind;
use toolwire_runtime::{EventBus, Executor, Finished, Landing, ResultSink};
use toolwire_store::{StoreError, StoredResult};

/// A sink that stores nothing: it announces each landed result, then its widgets, as a
/// host's sink does once it has stored them, numbering them as a store would.
struct Announce {
    events: Arc<EventBus>,
    landed: std::sync::atomic::AtomicI64,
}

impl ResultSink for Announce {
    fn land<'a>(
        &'a self,
        session_id: &'a str,
        landing: Landing,
    ) -> futures::future::BoxFuture<'a, Result<StoredResult, StoreError>> {
        Box::pin(async move {
            let result = landing.result;
            let kind = EventKind::tool_result(result.clone(), landing.raw);
            let _ = self.events.emit(session_id, kind).await;
            for widget in &result.widgets {
                let kind = EventKind::Widget {
                    call_id: result.call_id.clone(),
                    widget: Box::new(widget.clone()),
                };
                let _ = self.events.emit(session_id, kind).await;
            }
            let n = 1 + self
                .landed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(StoredResult {
                message_id: n,
                session_id: session_id.to_owned(),
                seq: n,
                created_at_ms: 0,
                result,
            })
        })
    }
}

/// Gives `ex` the announcing sink.
pub(crate) fn announcing(ex: Executor) -> Executor {
    let events = Arc::clone(ex.events());
    ex.set_sink(Arc::new(Announce {
        events,
        landed: Default::default(),
    }));
    ex
}

/// Lands `finished` through `ex`'s sink: announced, as a stored result would be.
pub(crate) async fn land(ex: &Executor, finished: Finished) -> toolwire_core::ToolResult {
    ex.land(finished, None).await.unwrap().result
}
