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
                    .map(|c| ModelCall {
                        signature: c.signature.clone(),
                        ..ModelCall::new(&c.id, &c.name, c.input.clone())
                    })
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

#[cfg(test)]
mod signature_tests {
    use super::*;
    use toolwire_store::ToolCall as StoredCall;

    #[test]
    fn a_stored_provider_signature_reaches_the_model_call() {
        let stored = vec![Message {
            id: 1,
            session_id: "s".into(),
            seq: 1,
            created_at_ms: 0,
            content: MessageContent::Assistant {
                text: String::new(),
                tool_calls: vec![StoredCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({}),
                    signature: Some("sig".into()),
                }],
            },
        }];
        let conv = conversation("", &stored);
        match &conv.messages[0] {
            ModelMessage::Assistant { tool_calls, .. } => {
                assert_eq!(tool_calls[0].signature.as_deref(), Some("sig"))
            }
            other => panic!("not an assistant message: {other:?}"),
        }
    }
}
