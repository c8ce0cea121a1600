//! Stored history → the model's conversation, and the tool set → the model's tool specs.

use toolwire_core::Message;
use toolwire_model::{Conversation, ToolSpec};
use toolwire_runtime::Registry;
use toolwire_store::StoredMessage;

/// The conversation a model request is built from: the system prompt, then every stored
/// message as it is (one vocabulary: nothing is converted; the model views skip widgets).
pub fn conversation(system: &str, stored: &[StoredMessage]) -> Conversation {
    let mut conv = Conversation::default();
    if !system.is_empty() {
        conv.push(Message::system(system));
    }
    conv.messages
        .extend(stored.iter().map(|message| message.content.clone()));
    conv
}

/// Every registered tool the model may call, as it is told about it, in registration
/// order; tools meant for a person only (`hidden_from_model`) are left out.
pub fn tool_specs(registry: &Registry) -> Vec<ToolSpec> {
    registry
        .schemas()
        .filter(|s| !s.hidden_from_model)
        .map(|s| ToolSpec {
            name: s.name.clone(),
            description: s.description.clone(),
            input_schema: s.input_schema.clone(),
        })
        .collect()
}

/// `base` with each tool's configured result size (`maxResultChars` in its MCP server's
/// config) added per tool; a size `base` already names for a tool stays.
pub fn budget_with_tool_settings(
    base: &toolwire_model::TruncationBudget,
    registry: &Registry,
) -> toolwire_model::TruncationBudget {
    let mut budget = base.clone();
    for schema in registry.schemas() {
        if let Some(n) = schema.max_result_chars {
            budget.per_tool.entry(schema.name.clone()).or_insert(n);
        }
    }
    budget
}

/// Model turns so far: the number of assistant messages.
pub fn turns_so_far(stored: &[StoredMessage]) -> u32 {
    let n = stored
        .iter()
        .filter(|m| matches!(m.content, Message::Assistant { .. }))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A stored session as `provider` would be sent it (`toolwire export`, the server's
/// `/export`): its request body and the notes on what was cut or changed.
pub async fn export_request(
    stores: &toolwire_store::Stores,
    session_id: &str,
    provider: toolwire_model::Provider,
    options: &toolwire_model::EncodeOptions,
    system: &str,
) -> Result<(serde_json::Value, Vec<toolwire_model::EncodeNote>), crate::HostError> {
    if stores.history().session(session_id).await?.is_none() {
        return Err(crate::HostError::NoSession(session_id.to_owned()));
    }
    let messages = stores.history().load(session_id).await?;
    let conv = conversation(system, &messages);
    let blobs = crate::StoreBlobs(std::sync::Arc::clone(stores.blobs()));
    Ok(toolwire_model::encode_request(provider, &conv, options, &blobs).await?)
}

#[cfg(test)]
mod signature_tests {
    use super::*;
    use toolwire_core::ToolCall as StoredCall;

    #[test]
    fn a_stored_provider_signature_reaches_the_model_call() {
        let stored = vec![StoredMessage {
            id: 1,
            session_id: "s".into(),
            seq: 1,
            created_at_ms: 0,
            content: Message::Assistant {
                text: String::new(),
                tool_calls: vec![StoredCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({}),
                    signature: Some("sig".into()),
                    by_person: None,
                }],
            },
        }];
        let conv = conversation("", &stored);
        match &conv.messages[0] {
            Message::Assistant { tool_calls, .. } => {
                assert_eq!(tool_calls[0].signature.as_deref(), Some("sig"))
            }
            other => panic!("not an assistant message: {other:?}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod budget_tests {
    use super::*;
    use futures::future::BoxFuture;
    use toolwire_tool::{Output, Tool, ToolContext, ToolError, ToolSchema};

    struct Sized(ToolSchema);

    impl Tool for Sized {
        fn schema(&self) -> &ToolSchema {
            &self.0
        }
        fn execute(
            &self,
            _input: serde_json::Value,
            _ctx: ToolContext,
        ) -> BoxFuture<'static, Result<Output, ToolError>> {
            Box::pin(async { Ok(Output::Raw(serde_json::json!({}))) })
        }
    }

    fn tool(name: &str, max: Option<usize>) -> Sized {
        let mut schema = ToolSchema::new(name, "t", serde_json::json!({"type": "object"}));
        schema.max_result_chars = max;
        Sized(schema)
    }

    #[test]
    fn configured_tool_sizes_join_the_budget_without_overriding_the_callers() {
        let mut registry = Registry::new();
        registry.register(tool("grep", Some(500))).unwrap();
        registry.register(tool("read", Some(90_000))).unwrap();
        registry.register(tool("plain", None)).unwrap();
        let mut base = toolwire_model::TruncationBudget::default();
        base.per_tool.insert("read".into(), 1_234);
        let budget = budget_with_tool_settings(&base, &registry);
        assert_eq!(budget.limit_for("c1", "grep"), 500);
        assert_eq!(budget.limit_for("c1", "read"), 1_234);
        assert_eq!(budget.limit_for("c1", "plain"), base.max_chars);
    }
}
