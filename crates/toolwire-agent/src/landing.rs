//! The result sink over the stores: the one place a finished call's result is appended
//! to the history, announced (as stored, after it is stored) and its suspensions
//! forgotten. The agent loop, `Host::run_call` and answers to pending calls all land here.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value as Json;
use toolwire_core::{Event, EventKind, Message, StoredAt, ToolResult};
use toolwire_runtime::{EventBus, Landing, ResultSink, land_each, now_rfc3339};
use toolwire_store::{InlineBlob, StoreError, StoredResult, Stores, store_failed};

/// Lands results in `stores`, announcing them on `events`.
pub(crate) struct StoreSink {
    stores: Stores,
    events: Arc<EventBus>,
}

impl StoreSink {
    pub(crate) fn new(stores: Stores, events: Arc<EventBus>) -> Arc<Self> {
        Arc::new(StoreSink { stores, events })
    }

    /// Keeps the payload as received beside `result`, when there is one: a small one is
    /// returned for the result's row to keep (stored in its commit), a larger one is
    /// stored as a blob now. The copy is a convenience: when it cannot be stored (a full
    /// blob store), the result lands without it, and the store's own error path says what
    /// failed if the result cannot be stored either.
    async fn keep_raw(
        &self,
        result: &mut ToolResult,
        raw_text: Option<Vec<u8>>,
    ) -> Option<InlineBlob> {
        let text = raw_text?;
        match self.stores.keep_raw(result, &text).await {
            Ok(inline) => inline,
            Err(_) => {
                result.metadata.raw_ref = None;
                None
            }
        }
    }
}

/// The events that tell the live view of a stored result: the result, then each widget.
/// The result's event names the message that holds it, so the log keeps a reference, not
/// a second copy (unless it carries the payload as received, which only it would keep).
fn announce(stored: &StoredResult, raw: Option<Json>, out: &mut Vec<EventKind>) {
    let result = &stored.result;
    let at = StoredAt(raw.is_none().then_some(stored.message_id));
    out.push(EventKind::ToolResult {
        result: Arc::new(result.clone()),
        raw,
        stored: at,
    });
    for widget in &result.widgets {
        out.push(EventKind::Widget {
            call_id: result.call_id.clone(),
            widget: Box::new(widget.clone()),
        });
    }
}

impl ResultSink for StoreSink {
    fn land<'a>(
        &'a self,
        session_id: &'a str,
        landing: Landing,
    ) -> BoxFuture<'a, Result<StoredResult, StoreError>> {
        Box::pin(async move {
            let Landing {
                mut result,
                raw,
                raw_text,
                suspensions,
                call,
            } = landing;
            if let Some(call) = call {
                // A call recorded behind its answer: stored before its result.
                self.stores
                    .append(session_id, Message::assistant("", vec![call]))
                    .await?;
            }
            let inline = self.keep_raw(&mut result, raw_text).await;
            // Media saved once, here; the announcement carries the blob references.
            let inline = inline.into_iter().collect();
            // Its event in the same commit where the store logs this bus's events: one
            // commit a result, not two (a debug copy of the raw payload rides in the
            // event only, so such a result is announced apart).
            let at = now_rfc3339();
            let (stored, logged) = if raw.is_none() && self.events.logs_to(self.stores.events()) {
                self.stores
                    .record_result_announced(session_id, result, inline, at.clone())
                    .await?
            } else {
                let stored = self
                    .stores
                    .record_result_or_failure(session_id, result, None, inline)
                    .await?;
                (stored, None)
            };
            let mut announced = Vec::new();
            announce(&stored, raw, &mut announced);
            let mut announced = announced.into_iter();
            if let Some(seq) = logged
                && let Some(kind) = announced.next()
            {
                let session_id = session_id.to_owned();
                let event = Event {
                    session_id,
                    seq,
                    at,
                    kind,
                };
                self.events.publish(event).await;
            }
            // Events are the live view: a failing log must not fail a stored call.
            for kind in announced {
                let _ = self.events.emit(session_id, kind).await;
            }
            for id in suspensions {
                // Stored: the pending call is done with. A failure leaves a row that
                // lists as resolving, which is harmless.
                let _ = self.stores.suspensions().finish_suspension(&id).await;
            }
            Ok(stored)
        })
    }

    /// The landings' media and large raw copies stored side by side, then every call
    /// and result (their small raw copies in their rows) in one append and every
    /// announcement in one write: a batch, even of one recorded call and its result,
    /// costs two commits, not two per result. When the append fails (all or none is
    /// stored), each lands alone, so a bad one fails alone.
    fn land_many<'a>(
        &'a self,
        session_id: &'a str,
        landings: Vec<Landing>,
    ) -> BoxFuture<'a, Vec<Result<StoredResult, StoreError>>> {
        Box::pin(async move {
            // One landing without a call to store beside it is one append either way.
            if landings.len() < 2 && landings.iter().all(|landing| landing.call.is_none()) {
                return land_each(self, session_id, landings).await;
            }
            // Each landing with its media stored and its raw copy kept: what is left is
            // the one append (or, if it fails, each landing alone).
            let prepared: Vec<(Landing, Option<InlineBlob>)> =
                futures::future::join_all(landings.into_iter().map(|mut landing| async move {
                    let raw_text = landing.raw_text.take();
                    let inline = self.keep_raw(&mut landing.result, raw_text).await;
                    let call_ref = landing.result.call();
                    landing.result = match self.stores.persist(landing.result, None).await {
                        Ok(persisted) => persisted,
                        Err(e) => store_failed(call_ref, &e),
                    };
                    (landing, inline)
                }))
                .await;
            // Clones share the bytes: each landing keeps its own, to land alone with.
            let inline: Vec<InlineBlob> = prepared
                .iter()
                .filter_map(|(_, inline)| inline.clone())
                .collect();
            let mut messages = Vec::with_capacity(prepared.len() * 2);
            for (landing, _) in &prepared {
                if let Some(call) = &landing.call {
                    messages.push(Message::assistant("", vec![call.clone()]));
                }
                messages.push(Message::ToolResult(landing.result.clone()));
            }
            let stored = match self
                .stores
                .append_many_inline(session_id, messages, inline)
                .await
            {
                Ok(stored) => stored,
                Err(_) => {
                    let alone = prepared.into_iter().map(|(mut landing, inline)| {
                        // Landing alone, it keeps its raw copy again from the text.
                        if let Some(inline) = inline {
                            landing.raw_text = Some(inline.bytes.to_vec());
                        }
                        landing
                    });
                    return land_each(self, session_id, alone.collect()).await;
                }
            };
            let results: Vec<StoredResult> = stored
                .into_iter()
                .filter_map(StoredResult::from_message)
                .collect();
            let mut announced = Vec::new();
            for (stored, (landing, _)) in results.iter().zip(&prepared) {
                announce(stored, landing.raw.clone(), &mut announced);
            }
            // Events are the live view: a failing log must not fail stored calls.
            let _ = self.events.emit_many(session_id, announced).await;
            for (landing, _) in &prepared {
                for id in &landing.suspensions {
                    let _ = self.stores.suspensions().finish_suspension(id).await;
                }
            }
            results.into_iter().map(Ok).collect()
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
