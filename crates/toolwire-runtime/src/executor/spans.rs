//! The executor's `execute_tool` spans: opened when a call starts, carried by the call's
//! [`Finished`] value while it waits for a person (the wait is a child span) and until its
//! result is stored, ended with the stored result (media by blob reference). Nothing here
//! runs without a tracer.

use super::*;
use crate::trace::{AttrValue, Span, SpanKind, attr, record_result};

/// A call's open span and, while it is suspended, the span of its wait for a person.
/// Owned by the call's value, never by a table: dropping it ends both spans as they are.
pub(super) struct OpenCall {
    span: Box<dyn Span>,
    /// The wait for a person while the call is suspended.
    wait: Option<Box<dyn Span>>,
    /// Whether the tracer records content (the result's text on the span).
    content: bool,
}

impl std::fmt::Debug for OpenCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCall")
            .field("trace", self.span.context())
            .field("waiting", &self.wait.is_some())
            .finish()
    }
}

impl OpenCall {
    /// The trace context the call's tool runs under.
    pub(super) fn context(&self) -> &TraceContext {
        self.span.context()
    }

    /// Ends the call's span with its result (the stored one, when it was stored).
    pub(super) fn end(mut self, result: &ToolResult) {
        drop(self.wait.take());
        record_result(self.span.as_mut(), result, self.content);
    }
}

impl Executor {
    /// Opens the call's `execute_tool` span under the scope's span (a turn's).
    pub(super) fn open_tool_span(&self, scope: &Scope, call: &ToolCall) -> Option<OpenCall> {
        let tracer = self.tracer.as_ref()?;
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
        Some(OpenCall {
            span,
            wait: None,
            content: tracer.records_content(),
        })
    }

    /// A call that waits for a person: the wait becomes a child span, open until
    /// [`Self::resumed_span`]. A call that suspends again (a second question) ends the
    /// first wait here.
    pub(super) fn suspended_span(&self, open: &mut OpenCall, result: &ToolResult) {
        let (Some(tracer), Some(s)) = (&self.tracer, &result.suspension) else {
            return;
        };
        let reason = match s.reason {
            SuspensionReason::Approval => "approval",
            SuspensionReason::Input => "input",
        };
        let wait = tracer.start(
            format!("await_{reason} {}", result.tool_name),
            SpanKind::Internal,
            Some(open.span.context()),
            vec![
                (attr::TOOL_CALL_ID, result.call_id.as_str().into()),
                (attr::SUSPENSION_ID, s.id.as_str().into()),
                (attr::SUSPENSION_REASON, reason.into()),
            ],
        );
        open.wait = Some(wait);
    }

    /// A waiting call was answered: its wait ends. A call suspended by another process
    /// (or before a restart) comes without a span, so its resumption opens one of its own.
    pub(super) fn resumed_span(
        &self,
        open: Option<OpenCall>,
        scope: &Scope,
        call: &ToolCall,
        resolution: &str,
    ) -> Option<OpenCall> {
        self.tracer.as_ref()?;
        match open {
            Some(mut open) => {
                if let Some(mut wait) = open.wait.take() {
                    wait.set(attr::RESOLUTION, resolution.into());
                }
                open.span.event(
                    "toolwire.resolved",
                    vec![(attr::RESOLUTION, resolution.into())],
                );
                Some(open)
            }
            None => {
                let mut open = self.open_tool_span(scope, call)?;
                open.span.set(attr::RESOLUTION, resolution.into());
                Some(open)
            }
        }
    }
}
