//! `ToolSchema`: how a tool presents itself to the model and to the executor
//! (docs/contracts.md, "Tool execution contract").

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// A tool's description. `inputSchema` is enforced before every call; `outputSchema`,
/// when present, on every successful output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSchema {
    /// snake_case, e.g. `read_file`.
    pub name: String,
    /// What it does, when to use it and what it returns: what the model chooses by.
    pub description: String,
    /// JSON Schema of the input; every call's input is checked against it before it runs.
    pub input_schema: Json,
    /// JSON Schema of a successful output, checked when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Json>,
    /// Whether the call runs and returns, waits for a person, or only displays.
    #[serde(default)]
    pub execution_mode: ExecutionMode,
    /// Whether a person must approve each call first.
    #[serde(default)]
    pub approval: ApprovalPolicy,
    /// Example inputs (and outputs) that show the model how to call it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<ToolExample>,
    /// MCP hints: read-only, destructive, idempotent, open-world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Per-tool limit; the executor's default applies when absent.
    #[serde(skip)]
    pub timeout: Option<Duration>,
    /// Characters of one result's text the model is given, when a person configured it
    /// for this tool (an MCP server's `maxResultChars`); the budget's default otherwise.
    /// Not part of the tool's description: it is the user's setting, not the tool's.
    #[serde(skip)]
    pub max_result_chars: Option<usize>,
    /// Callable by a person (CLI, web app) but never offered to the model: an MCP App's
    /// tool whose `visibility` leaves out `"model"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden_from_model: bool,
    /// Never callable by an MCP App's view, even one of its own server: an MCP tool whose
    /// `visibility` leaves out `"app"`. The server checks it, not only the page.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden_from_apps: bool,
    /// Where the tool comes from, for a tool a source (an MCP server) gives: so that the
    /// page and the server never rebuild a source's naming rule (`PREFIX__TOOL`, with its
    /// collisions and cleanups) to find a tool's own name or its siblings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ToolOrigin>,
    /// What a tool source declared beyond the fields above (an MCP tool's `title`,
    /// `icons`, `_meta`), kept as it came.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Json>,
}

impl ToolSchema {
    /// A functional tool needing no approval, with this name, description and input schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Json,
    ) -> Self {
        ToolSchema {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            execution_mode: ExecutionMode::Functional,
            approval: ApprovalPolicy::Never,
            examples: Vec::new(),
            annotations: None,
            timeout: None,
            max_result_chars: None,
            hidden_from_model: false,
            hidden_from_apps: false,
            origin: None,
            extra: serde_json::Map::new(),
        }
    }
}

/// A source's tool: which source, and the tool's own name there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolOrigin {
    /// The source's name as configured (an MCP server's key in `mcpServers`).
    pub source: String,
    /// The tool's name on its source (what `tools/call` is sent with).
    pub name: String,
}

/// How the executor runs a call (docs/contracts.md, "Tool execution contract").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// Runs and returns. `immediate` is accepted as the older name.
    #[default]
    #[serde(alias = "immediate")]
    Functional,
    /// Waits for a person; the answer becomes the output, with no re-execution.
    Blocking,
    /// Completes at once; the value is for the person, the model gets an acknowledgement.
    Display,
}

/// Whether a person must approve a call before it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    /// Runs without asking.
    #[default]
    Never,
    /// Asks a person before every call.
    Always,
}

/// An example call, for the model: an input, and what it returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolExample {
    /// The example's input.
    pub input: Json,
    /// What the call returns, when shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Json>,
    /// When the example applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// MCP tool annotations: hints, not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable name for the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite something (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same input changes nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches things outside a closed world (the web, other people).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A tool name every provider accepts as a function name: 1 to 64 of `[a-zA-Z0-9_-]`,
/// starting with a letter or `_` (Gemini wants that). Built-ins are snake_case; MCP
/// tools keep their own spelling behind their server's prefix (`everything__get-tiny-image`).
pub fn is_valid_tool_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= 64
        && matches!(bytes.next(), Some(b'a'..=b'z' | b'A'..=b'Z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for ok in [
            "read_file",
            "a",
            "git_status2",
            "ReadFile",
            "fs__read-file",
            "_x",
        ] {
            assert!(is_valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "-x", "a.b", "2fa", "read file", &"a".repeat(65)] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn immediate_is_functional() {
        let m: ExecutionMode = serde_json::from_str("\"immediate\"").unwrap();
        assert_eq!(m, ExecutionMode::Functional);
    }
}
