//! The agent's spans by the GenAI conventions: `invoke_agent` for a turn (a subagent's
//! under the `task` call that started it) and `chat {model}` for each model request.

use toolwire_core::TraceContext;
use toolwire_model::ClientError;
use toolwire_model::{AssistantReply, Provider};
use toolwire_runtime::trace::{AttrValue, Span, SpanKind, attr};

use crate::{Agent, AgentError, StopReason, TurnOutcome};

/// The conventions' `gen_ai.provider.name` for a provider format.
pub(crate) fn provider_name(provider: Provider) -> &'static str {
    match provider {
        Provider::Anthropic => "anthropic",
        Provider::OpenaiChat | Provider::OpenaiResponses => "openai",
        Provider::Gemini => "gcp.gemini",
    }
}

impl Agent {
    /// Opens the turn's `invoke_agent` span, when tracing is on.
    pub(crate) fn turn_span(
        &self,
        session_id: &str,
        parent: Option<&TraceContext>,
        parent_call: Option<&str>,
    ) -> Option<Box<dyn Span>> {
        let tracer = self.executor.tracer()?;
        let name = self.agent_name();
        let mut attributes = vec![
            (attr::OPERATION, AttrValue::from("invoke_agent")),
            (attr::AGENT_NAME, name.into()),
            (attr::CONVERSATION, session_id.into()),
            (attr::PROVIDER, provider_name(self.provider()).into()),
            (attr::REQUEST_MODEL, self.config.model.as_str().into()),
        ];
        if let Some(call) = parent_call {
            attributes.push((attr::PARENT_CALL_ID, call.into()));
        }
        Some(tracer.start(
            format!("invoke_agent {name}"),
            SpanKind::Internal,
            parent,
            attributes,
        ))
    }

    /// Opens a `chat {model}` span for one model request under the turn's span.
    pub(crate) fn chat_span(&self, turn: Option<&dyn Span>) -> Option<Box<dyn Span>> {
        let tracer = self.executor.tracer()?;
        let model = self.config.model.as_str();
        Some(tracer.start(
            format!("chat {model}"),
            SpanKind::Client,
            turn.map(Span::context),
            vec![
                (attr::OPERATION, AttrValue::from("chat")),
                (attr::PROVIDER, provider_name(self.provider()).into()),
                (attr::REQUEST_MODEL, model.into()),
            ],
        ))
    }
}

/// What a model request's span records of its answer: usage and finish reason, or the
/// failure.
pub(crate) fn record_reply(span: &mut dyn Span, reply: &Result<AssistantReply, AgentError>) {
    match reply {
        Ok(reply) => {
            if let Some(usage) = reply.usage {
                span.set(attr::INPUT_TOKENS, usage.input_tokens.into());
                span.set(attr::OUTPUT_TOKENS, usage.output_tokens.into());
            }
            if let Some(reason) = &reply.stop_reason {
                span.set(attr::FINISH_REASONS, AttrValue::Strs(vec![reason.clone()]));
            }
        }
        Err(e) => span.fail(error_type(e), &e.to_string()),
    }
}

/// What a turn's span records of how it ended.
pub(crate) fn record_turn(span: &mut dyn Span, outcome: &Result<TurnOutcome, AgentError>) {
    match outcome {
        Ok(o) => {
            let stop = match o.stop {
                StopReason::Done => "done",
                StopReason::Cancelled => "cancelled",
                StopReason::MaxIterations => "max_iterations",
            };
            span.set("toolwire.turn.stop", stop.into());
            span.set("toolwire.turn.iterations", u64::from(o.iterations).into());
            if o.stop == StopReason::Cancelled {
                span.fail("cancelled", "the turn was cancelled");
            }
        }
        Err(e) => span.fail(error_type(e), &e.to_string()),
    }
}

/// A low-cardinality `error.type` for a failed turn or request.
fn error_type(e: &AgentError) -> &'static str {
    match e {
        AgentError::Store(_) => "store",
        AgentError::Encode(_) => "encode",
        AgentError::NoSink(_) => "no_sink",
        AgentError::Model(m) => match m {
            ClientError::MissingKey { .. } => "missing_key",
            ClientError::Http { .. } => "http",
            ClientError::Transport { .. } => "transport",
            ClientError::Decode(_) => "decode",
            ClientError::Stream { .. } => "stream",
            ClientError::TooLarge { .. } => "too_large",
        },
    }
}
