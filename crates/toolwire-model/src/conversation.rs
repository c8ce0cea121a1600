//! The provider-neutral conversation: what a session holds, free of any provider's JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use toolwire_core::ToolResult;

/// A conversation as stored: ordered messages. Tool results hold the canonical
/// [`ToolResult`], so the same stored value feeds every provider's view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// Instructions; providers that take one system prompt get them joined in order.
    System {
        text: String,
    },
    User {
        text: String,
    },
    /// What the model said: text, then the calls it made, in the order it made them.
    Assistant {
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one call; results may be stored in completion order.
    Tool {
        result: Box<ToolResult>,
    },
}

/// One call the model made. `arguments` is the parsed JSON input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Json,
    /// Opaque data the provider requires back with this call in later requests (Gemini's
    /// `thoughtSignature`; Gemini 3 answers 400 without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Json) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            signature: None,
        }
    }
}

impl Message {
    pub fn system(text: impl Into<String>) -> Self {
        Message::System { text: text.into() }
    }

    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
        }
    }

    pub fn tool(result: ToolResult) -> Self {
        Message::Tool {
            result: Box::new(result),
        }
    }
}

impl Conversation {
    pub fn new(messages: Vec<Message>) -> Self {
        Conversation { messages }
    }

    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }
}
