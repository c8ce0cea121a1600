//! What an encoding is for: the provider, the model, the tools and the budgets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// What the tool does, for the model to choose by.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the input; an object schema.
    pub input_schema: Json,
}

/// The default `toolResultMaxLength`: characters of one result's text the model sees
/// (docs/contracts.md, "Tool execution contract").
pub const DEFAULT_MAX_CHARS: usize = 60_000;

/// The default number of most recent messages whose media is sent inline (as in Dexto).
pub(crate) const DEFAULT_INLINE_MEDIA_MESSAGES: usize = 2;

/// How many characters of tool-result text the model sees. The most specific setting wins:
/// per call, then per tool, then the instance's `max_chars`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TruncationBudget {
    /// Characters per result (`toolResultMaxLength`).
    pub max_chars: usize,
    /// Characters per result for a tool, by tool name; overrides `max_chars`.
    pub per_tool: BTreeMap<String, usize>,
    /// Characters per result for a call, by call id; overrides the rest.
    pub per_call: BTreeMap<String, usize>,
    /// Optional total for all results of one assistant turn, shared fairly.
    pub turn_max_chars: Option<usize>,
}

impl Default for TruncationBudget {
    fn default() -> Self {
        TruncationBudget {
            max_chars: DEFAULT_MAX_CHARS,
            per_tool: BTreeMap::new(),
            per_call: BTreeMap::new(),
            turn_max_chars: None,
        }
    }
}

impl TruncationBudget {
    /// The per-result limit for one call.
    pub fn limit_for(&self, call_id: &str, tool_name: &str) -> usize {
        self.per_call
            .get(call_id)
            .or_else(|| self.per_tool.get(tool_name))
            .copied()
            .unwrap_or(self.max_chars)
    }
}

/// Everything an encoder needs besides the conversation and the blobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EncodeOptions {
    /// The model to ask, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// Required by Anthropic; sent as the output limit by every format.
    pub max_tokens: u32,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// How much of each result's text the model sees.
    pub budget: TruncationBudget,
    /// Media of the most recent N messages is sent inline; older media becomes a placeholder.
    pub inline_media_messages: usize,
    /// Adds the format's `stream` flag where the body carries one.
    pub stream: bool,
    /// The conversation is a piece of one the caller holds (a framework splicing the
    /// messages into its own request, after its own user turn): nothing is put before a
    /// model turn that opens it. A whole request (`export`, the agent loop) gets a user
    /// turn first, as providers require.
    pub fragment: bool,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            model: String::new(),
            max_tokens: 4096,
            tools: Vec::new(),
            budget: TruncationBudget::default(),
            inline_media_messages: DEFAULT_INLINE_MEDIA_MESSAGES,
            stream: false,
            fragment: false,
        }
    }
}

impl EncodeOptions {
    /// The defaults, for `model`.
    pub fn for_model(model: impl Into<String>) -> Self {
        EncodeOptions {
            model: model.into(),
            ..EncodeOptions::default()
        }
    }
}
