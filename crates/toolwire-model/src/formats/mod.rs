//! Provider wire formats, one module each: request bodies from a [`crate::view::ModelView`],
//! and responses and stream events back into an [`AssistantReply`].

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;

use serde_json::{Map, Value as Json};

use crate::conversation::{Message, ToolCall};

/// What the model answered: its text and the calls it made, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistantReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// The provider's own stop reason, e.g. `tool_use`, `tool_calls`, `STOP`.
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl AssistantReply {
    pub fn into_message(self) -> Message {
        Message::assistant(self.text, self.tool_calls)
    }
}

/// A response or stream event that does not have the shape its format documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected {provider} response: {message}")]
pub struct DecodeError {
    pub provider: &'static str,
    pub message: String,
}

impl DecodeError {
    pub(crate) fn new(provider: &'static str, message: impl Into<String>) -> Self {
        DecodeError {
            provider,
            message: message.into(),
        }
    }
}

/// Tool input as the JSON object every provider requires. Stored arguments that are a
/// JSON string (as OpenAI sends them) are parsed; anything else is wrapped, never lost.
pub(crate) fn arguments_object(arguments: &Json) -> Map<String, Json> {
    match arguments {
        Json::Object(map) => map.clone(),
        Json::Null => Map::new(),
        Json::String(s) => match serde_json::from_str::<Json>(s) {
            Ok(Json::Object(map)) => map,
            _ => Map::from_iter([("input".to_owned(), arguments.clone())]),
        },
        other => Map::from_iter([("input".to_owned(), other.clone())]),
    }
}

/// Parses a streamed or returned arguments string; an unparsable one is kept as a string
/// so that the result can tell the model its input was invalid.
pub(crate) fn parse_arguments(raw: &str) -> Json {
    if raw.trim().is_empty() {
        return Json::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Json::String(raw.to_owned()))
}

/// The text sent for an error result in formats without an error flag.
pub(crate) fn error_prefixed(text: &str) -> String {
    format!("Error: {text}")
}
