//! The result sink over the stores: the one place a finished call's result is appended
//! to the history, announced (as stored, after it is stored) and its suspensions
//! forgotten. The agent loop, `Host::call` and answers to pending calls all land here.

use std::sync::Arc;

use futures::future::BoxFuture;
use toolwire_core::{EventKind, Message};
use toolwire_runtime::{EventBus, Landing, ResultSink};
use toolwire_store::{StoreError, StoredMessage, Stores};

/// Lands results in `stores`, announcing them on `events`.
pub(crate) struct StoreSink {
    stores: Stores,
    events: Arc<EventBus>,
}

impl StoreSink {
    pub(crate) fn new(stores: Stores, events: Arc<EventBus>) -> Arc<Self> {
        Arc::new(StoreSink { stores, events })
    }
}

impl ResultSink for StoreSink {
    fn land<'a>(
        &'a self,
        session_id: &'a str,
        landing: Landing,
    ) -> BoxFuture<'a, Result<StoredMessage, StoreError>> {
        Box::pin(async move {
            let Landing {
                mut result,
                raw,
                raw_text,
                suspensions,
            } = landing;
            if let Some(text) = raw_text {
                // The copy as received is a convenience: when it cannot be stored (a full
                // blob store), the result lands without it, and the store's own error
                // path below says what failed if the result cannot be stored either.
                if self.stores.keep_raw(&mut result, &text).await.is_err() {
                    result.metadata.raw_ref = None;
                }
            }
            // Media saved once, here; the announcement carries the blob references.
            let stored = self
                .stores
                .record_result_or_failure(session_id, result, None)
                .await?;
            if let Message::ToolResult(result) = &stored.content {
                // Events are the live view: a failing log must not fail a stored call.
                let announced = EventKind::ToolResult {
                    result: Box::new(result.clone()),
                    raw,
                };
                let _ = self.events.emit(session_id, announced).await;
                for widget in &result.widgets {
                    let shown = EventKind::Widget {
                        call_id: result.call_id.clone(),
                        widget: Box::new(widget.clone()),
                    };
                    let _ = self.events.emit(session_id, shown).await;
                }
            }
            for id in suspensions {
                // Stored: the pending call is done with. A failure leaves a row that
                // lists as resolving, which is harmless.
                let _ = self.stores.suspensions().finish_suspension(&id).await;
            }
            Ok(stored)
        })
    }
}

/// Gives `executor` a sink over `stores` unless it has one, so that every result it
/// finishes lands in the store before anyone hears of it.
pub(crate) fn ensure_sink(executor: &toolwire_runtime::Executor, stores: &Stores) {
    if !executor.has_sink() {
        executor.set_sink(StoreSink::new(
            stores.clone(),
            Arc::clone(executor.events()),
        ));
    }
}
