//! Stored history → the model's conversation, and the tool set → the model's tool specs.

use toolwire_model::{Conversation, Message as ModelMessage, ToolCall as ModelCall, ToolSpec};
use toolwire_store::{Message, MessageContent};

use crate::registry::Registry;

/// The conversation a model request is built from: the system prompt, then every stored
/// user, assistant and tool-result message in order (widgets are for people only).
pub fn conversation(system: &str, stored: &[Message]) -> Conversation {
    let mut conv = Conversation::default();
    if !system.is_empty() {
        conv.push(ModelMessage::system(system));
    }
    for message in stored {
        match &message.content {
            MessageContent::User { text } => conv.push(ModelMessage::user(text.clone())),
            MessageContent::Assistant { text, tool_calls } => conv.push(ModelMessage::assistant(
                text.clone(),
                tool_calls
                    .iter()
                    .map(|c| ModelCall::new(&c.id, &c.name, c.input.clone()))
                    .collect(),
            )),
            MessageContent::ToolResult(result) => conv.push(ModelMessage::tool(result.clone())),
            MessageContent::Widget { .. } => {}
        }
    }
    conv
}

/// Every registered tool as the model is told about it, in registration order.
pub fn tool_specs(registry: &Registry) -> Vec<ToolSpec> {
    registry
        .schemas()
        .map(|s| ToolSpec {
            name: s.name.clone(),
            description: s.description.clone(),
            input_schema: s.input_schema.clone(),
        })
        .collect()
}

/// Model turns so far: the number of assistant messages.
pub fn turns_so_far(stored: &[Message]) -> u32 {
    let n = stored
        .iter()
        .filter(|m| matches!(m.content, MessageContent::Assistant { .. }))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}
