//! The executor's `execute_tool` spans: opened when a call starts, kept open while it
//! waits for a person (the wait is a child span) and until its result is stored, ended
//! with the stored result (media by blob reference). Nothing here runs without a tracer.

use std::collections::HashMap;
use std::sync::Mutex;

use super::*;
use crate::trace::{AttrValue, Span, SpanKind, attr, record_result};

/// Calls with an open span at most: spans of calls whose results never land (a caller
/// that drops them, a wait nobody answers) must not grow without bound.
const MAX_OPEN: usize = 4096;

/// Open spans by (session, call id): call ids are unique in a session only.
#[derive(Default)]
pub(super) struct OpenSpans(Mutex<HashMap<(String, String), OpenCall>>);

pub(super) struct OpenCall {
    span: Box<dyn Span>,
    /// The wait for a person while the call is suspended.
    wait: Option<Box<dyn Span>>,
}

impl OpenSpans {
    fn take(&self, session_id: &str, call_id: &str) -> Option<OpenCall> {
        let mut open = self.0.lock().ok()?;
        open.remove(&(session_id.to_owned(), call_id.to_owned()))
    }

    fn put(&self, session_id: &str, call_id: &str, call: OpenCall) {
        if let Ok(mut open) = self.0.lock() {
            if open.len() >= MAX_OPEN {
                // Dropping them ends them: they are exported as they are, not lost.
                open.clear();
            }
            open.insert((session_id.to_owned(), call_id.to_owned()), call);
        }
    }

    fn context(&self, session_id: &str, call_id: &str) -> Option<TraceContext> {
        let open = self.0.lock().ok()?;
        open.get(&(session_id.to_owned(), call_id.to_owned()))
            .map(|c| c.span.context().clone())
    }
}

impl Executor {
    /// Opens the call's `execute_tool` span under the scope's span (a turn's).
    pub(super) fn open_tool_span(&self, scope: &Scope, call: &ToolCall) {
        let Some(tracer) = &self.tracer else { return };
        let tool_type = match self.registry().get(&call.name) {
            // The conventions' `extension`: a tool another service runs for the agent.
            Some(reg) if reg.schema().origin.is_some() => "extension",
            _ => "function",
        };
        let mut attributes = vec![
            (attr::OPERATION, AttrValue::from("execute_tool")),
            (attr::TOOL_NAME, call.name.as_str().into()),
            (attr::TOOL_CALL_ID, call.id.as_str().into()),
            (attr::TOOL_TYPE, tool_type.into()),
            (attr::CONVERSATION, scope.session_id.as_str().into()),
        ];
        if tracer.records_content() {
            attributes.push((attr::TOOL_ARGUMENTS, call.input.to_string().into()));
        }
        let span = tracer.start(
            format!("execute_tool {}", call.name),
            SpanKind::Internal,
            scope.trace.as_ref(),
            attributes,
        );
        self.spans
            .put(&scope.session_id, &call.id, OpenCall { span, wait: None });
    }

    /// The trace context a running call's tool gets (its `execute_tool` span's).
    pub(super) fn tool_trace(&self, session_id: &str, call_id: &str) -> Option<TraceContext> {
        self.tracer.as_ref()?;
        self.spans.context(session_id, call_id)
    }

    /// A call that waits for a person: the wait becomes a child span, open until
    /// [`Self::resumed_span`].
    pub(super) fn suspended_span(&self, scope: &Scope, call: &ToolCall, s: &Suspension) {
        let Some(tracer) = &self.tracer else { return };
        let Some(mut open) = self.spans.take(&scope.session_id, &call.id) else {
            return;
        };
        let reason = match s.reason {
            SuspensionReason::Approval => "approval",
            SuspensionReason::Input => "input",
        };
        let wait = tracer.start(
            format!("await_{reason} {}", call.name),
            SpanKind::Internal,
            Some(open.span.context()),
            vec![
                (attr::TOOL_CALL_ID, call.id.as_str().into()),
                (attr::SUSPENSION_ID, s.id.as_str().into()),
                (attr::SUSPENSION_REASON, reason.into()),
            ],
        );
        // A call that suspends again (a second question) ends the first wait here.
        open.wait = Some(wait);
        self.spans.put(&scope.session_id, &call.id, open);
    }

    /// A waiting call was answered: its wait ends. A call suspended by another process
    /// (or before a restart) has no span here, so its resumption opens one of its own.
    pub(super) fn resumed_span(&self, scope: &Scope, call: &ToolCall, resolution: &str) {
        if self.tracer.is_none() {
            return;
        }
        match self.spans.take(&scope.session_id, &call.id) {
            Some(mut open) => {
                if let Some(mut wait) = open.wait.take() {
                    wait.set(attr::RESOLUTION, resolution.into());
                }
                open.span.event(
                    "toolwire.resolved",
                    vec![(attr::RESOLUTION, resolution.into())],
                );
                self.spans.put(&scope.session_id, &call.id, open);
            }
            None => {
                self.open_tool_span(scope, call);
                if let Some(mut open) = self.spans.take(&scope.session_id, &call.id) {
                    open.span.set(attr::RESOLUTION, resolution.into());
                    self.spans.put(&scope.session_id, &call.id, open);
                }
            }
        }
    }

    /// Ends the call's span with its result (the stored one, when a sink stores it).
    pub(super) fn end_tool_span(&self, session_id: &str, result: &ToolResult) {
        let Some(tracer) = &self.tracer else { return };
        if let Some(mut open) = self.spans.take(session_id, &result.call_id) {
            drop(open.wait.take());
            record_result(open.span.as_mut(), result, tracer.records_content());
        }
    }
}
