//! Display hints and MCP annotations: how a value asks to be shown, and to whom
//! (docs/contracts.md, "Result kinds and display hints").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Hints a UI may honour; every field is optional and a UI that ignores them still works.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisplayHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_view: Option<View>,
    /// Language for code highlighting, e.g. `rust`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<bool>,
    /// Lines (terminal) or pixels (browser) before the view is cut or scrolls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_height: Option<u32>,
    /// Higher is more prominent; values of one result are shown in descending priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
}

impl DisplayHints {
    pub fn is_empty(&self) -> bool {
        *self == DisplayHints::default()
    }
}

/// The generic views, used for kinds a renderer does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum View {
    Text,
    Markdown,
    Code,
    Diff,
    Table,
    Tree,
    Image,
    Raw,
    Hidden,
}

/// MCP annotations on a content block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the value is for. `["user"]` keeps it from the model; `["assistant"]` from the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Audience>>,
    /// MCP importance, 0.0 (optional) to 1.0 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Annotation keys beyond MCP's, kept so nothing a server sent is lost.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Annotations {
    /// Whether the audience is set and leaves out `who`.
    pub fn excludes(&self, who: Audience) -> bool {
        self.audience.as_ref().is_some_and(|a| !a.contains(&who))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    User,
    Assistant,
}
