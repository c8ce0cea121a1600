//! What an encoding is for: the provider, the model, the tools and the budgets.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The four request formats toolwire speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions, also spoken by ollama, llama.cpp and vLLM.
    OpenaiChat,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Gemini generateContent.
    Gemini,
}

impl Provider {
    pub const ALL: [Provider; 4] = [
        Provider::Anthropic,
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Gemini,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenaiChat => "openai-chat",
            Provider::OpenaiResponses => "openai-responses",
            Provider::Gemini => "gemini",
        }
    }

    /// The model used when none is named: a current, widely available one per API.
    pub fn default_model(self) -> &'static str {
        match self {
            Provider::Anthropic => "claude-sonnet-4-5",
            Provider::OpenaiChat | Provider::OpenaiResponses => "gpt-4.1",
            Provider::Gemini => "gemini-2.5-flash",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`; expected anthropic, openai-chat, openai-responses or gemini")]
pub struct UnknownProvider(pub String);

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the input; an object schema.
    pub input_schema: Json,
}

/// The default `toolResultMaxLength`: characters of one result's text the model sees
/// (docs/contracts.md, "Tool execution contract").
pub const DEFAULT_MAX_CHARS: usize = 60_000;

/// The default number of most recent messages whose media is sent inline (as in Dexto).
pub const DEFAULT_INLINE_MEDIA_MESSAGES: usize = 2;

/// How many characters of tool-result text the model sees. The most specific setting wins:
/// per call, then per tool, then the instance's `max_chars`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TruncationBudget {
    /// Characters per result (`toolResultMaxLength`).
    pub max_chars: usize,
    pub per_tool: BTreeMap<String, usize>,
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
    pub model: String,
    /// Required by Anthropic; sent as the output limit by every format.
    pub max_tokens: u32,
    pub tools: Vec<ToolSpec>,
    pub budget: TruncationBudget,
    /// Media of the most recent N messages is sent inline; older media becomes a placeholder.
    pub inline_media_messages: usize,
    /// Adds the format's `stream` flag where the body carries one.
    pub stream: bool,
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
        }
    }
}

impl EncodeOptions {
    pub fn for_model(model: impl Into<String>) -> Self {
        EncodeOptions {
            model: model.into(),
            ..EncodeOptions::default()
        }
    }
}
