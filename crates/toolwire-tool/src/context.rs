//! `ToolContext`: what a running tool can see and do (identity, cancellation, widgets,
//! progress, the payload it received).

use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;
use toolwire_core::{TraceContext, Widget};

use futures::future::BoxFuture;

/// Cheap to clone (its ids are shared, not copied: an executor hands one call's context to
/// the tool, to its MCP routing and to its progress, three copies a call); every clone
/// talks to the same call.
#[derive(Clone)]
pub struct ToolContext {
    /// The id of the call being run.
    pub call_id: Arc<str>,
    /// The session the call belongs to.
    pub session_id: Arc<str>,
    /// The trace the call runs under, for logs across processes.
    pub trace_id: Arc<str>,
    /// The session's owner, when the host knows one.
    pub user_id: Option<String>,
    /// Cancelled on timeout, on a user's cancel, or when the turn is abandoned. Long tools
    /// should check it; the executor stops waiting either way.
    pub cancel: CancellationToken,
    /// True when a person approved this call after it suspended; a tool that suspends
    /// itself (`ToolError::Suspend`) checks it to proceed.
    pub approved: bool,
    /// The trace span this call runs under, when tracing is on: a tool that calls another
    /// process (an MCP server) passes it on as `traceparent`, so that work joins the trace.
    pub trace: Option<TraceContext>,
    /// Whether the executor keeps what a tool received ([`ToolContext::received`]):
    /// copying every payload costs, so tools only copy when asked.
    keeps_received: bool,
    shared: Arc<Shared>,
}

struct Shared {
    widgets: Mutex<Vec<Widget>>,
    received: Mutex<Option<Received>>,
    progress: Option<Arc<dyn ProgressSink>>,
}

/// A payload as a tool received it: parsed, or as the JSON text it came in.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// Parsed.
    Json(Json),
    /// One JSON value's text, as it came (an MCP server's result read by the typed fast
    /// path, which checked every byte of it).
    Text(String),
}

impl Received {
    /// The payload as a JSON tree; `None` for text that is not JSON (a tool's mistake).
    pub fn into_json(self) -> Option<Json> {
        match self {
            Received::Json(json) => Some(json),
            Received::Text(text) => serde_json::from_str(&text).ok(),
        }
    }
}

/// Where a running call's progress goes: the executor's event bus, a test's recorder.
/// Kept as a trait so that tools do not depend on the event machinery.
pub trait ProgressSink: Send + Sync {
    /// Reports `done` of `total` units (and what is being done) for call `call_id` of `session_id`.
    fn progress(
        &self,
        session_id: &str,
        call_id: &str,
        done: u64,
        total: Option<u64>,
        message: Option<&str>,
    ) -> BoxFuture<'static, ()>;
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("session_id", &self.session_id)
            .finish()
    }
}

impl ToolContext {
    /// A context for one call; executors build it, tools only receive it.
    pub fn new(
        call_id: &str,
        session_id: &str,
        trace_id: &str,
        user_id: Option<String>,
        progress: Option<Arc<dyn ProgressSink>>,
    ) -> Self {
        ToolContext {
            call_id: call_id.into(),
            session_id: session_id.into(),
            trace_id: trace_id.into(),
            user_id,
            cancel: CancellationToken::new(),
            approved: false,
            trace: None,
            keeps_received: false,
            shared: Arc::new(Shared {
                widgets: Mutex::new(Vec::new()),
                received: Mutex::new(None),
                progress,
            }),
        }
    }

    /// A context for calling a tool outside an executor (tests, embedding).
    pub fn detached(call_id: &str) -> Self {
        ToolContext::new(call_id, "detached", call_id, None, None)
    }

    /// Shows `data` to the person as widget `widget`. It reaches the UI only if the call
    /// succeeds (a failed call's half-drawn widget would mislead); the model never sees it.
    pub fn display_widget(&self, widget: &str, data: Json, fallback: &str) {
        if let Ok(mut widgets) = self.shared.widgets.lock() {
            widgets.push(Widget::new(widget, data, fallback));
        }
    }

    /// Reports progress to subscribers; a no-op outside an executor.
    pub async fn progress(&self, done: u64, total: Option<u64>, message: Option<&str>) {
        if let Some(sink) = &self.shared.progress {
            // Progress is advisory: a sink that fails must not fail the tool.
            sink.progress(&self.session_id, &self.call_id, done, total, message)
                .await;
        }
    }

    /// The same context, asking the tool to report the payload it received
    /// ([`ToolContext::received`]); set by an executor that keeps raw payloads.
    pub fn keeping_received(mut self) -> Self {
        self.keeps_received = true;
        self
    }

    /// Whether the payload a tool received is wanted: check before copying it.
    pub fn keeps_received(&self) -> bool {
        self.keeps_received
    }

    /// Reports the payload as the tool received it (an MCP server's `CallToolResult`),
    /// for a tool that returns a typed [`crate::Output`] made from it. Kept only when
    /// [`ToolContext::keeps_received`]; the last one reported wins.
    pub fn received(&self, raw: Json) {
        self.keep_received(Received::Json(raw));
    }

    /// [`ToolContext::received`] of a payload still as the JSON text it came in (a tool
    /// that read it without parsing it into a tree): kept as that text, never parsed
    /// again to be stored. The text must be one JSON value.
    pub fn received_text(&self, text: String) {
        self.keep_received(Received::Text(text));
    }

    fn keep_received(&self, raw: Received) {
        if !self.keeps_received {
            return;
        }
        if let Ok(mut received) = self.shared.received.lock() {
            *received = Some(raw);
        }
    }

    /// The payload reported by [`ToolContext::received`] or
    /// [`ToolContext::received_text`], taken out.
    pub fn take_received(&self) -> Option<Received> {
        self.shared.received.lock().ok()?.take()
    }

    /// The widgets shown so far, taken out; the executor attaches them to the result.
    pub fn take_widgets(&self) -> Vec<Widget> {
        self.shared
            .widgets
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
    }
}
