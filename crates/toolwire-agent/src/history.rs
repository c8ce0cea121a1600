//! The tool set → the model's tool specs and result sizes, and the turns of a stored history.

use toolwire_core::Message;
use toolwire_model::ToolSpec;
use toolwire_runtime::Registry;
use toolwire_store::StoredMessage;

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
pub(crate) fn turns_so_far(stored: &[StoredMessage]) -> u32 {
    let n = stored
        .iter()
        .filter(|m| matches!(m.content, Message::Assistant { .. }))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
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
        // The request the loop sends carries it back (Gemini's `thoughtSignature`).
        let request = crate::ModelRequest::new(
            toolwire_model::Provider::Gemini,
            &crate::AgentConfig::new("m"),
            &Registry::new(),
        );
        let (body, _) =
            futures::executor::block_on(request.body(&stored, &toolwire_model::NoBlobs)).unwrap();
        let body = String::from_utf8(body).unwrap();
        assert!(body.contains(r#""thoughtSignature":"sig""#), "{body}");
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
