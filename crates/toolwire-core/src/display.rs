//! Display hints and MCP annotations: how a value asks to be shown, and to whom
//! (docs/contracts.md, "Result kinds and display hints").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Hints a UI may honour; every field is optional and a UI that ignores them still works.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisplayHints {
    /// The generic view to use when the renderer does not know the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_view: Option<View>,
    /// Language for code highlighting, e.g. `rust`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Start folded: shown as a one-line summary until opened.
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
    /// Whether no hint is set, so the hints can be left out of the wire form.
    pub fn is_empty(&self) -> bool {
        *self == DisplayHints::default()
    }
}

/// The generic views, used for kinds a renderer does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// Plain text.
    Text,
    /// Rendered markdown.
    Markdown,
    /// Source code, highlighted in `language`.
    Code,
    /// A file diff.
    Diff,
    /// Rows and columns.
    Table,
    /// A nested tree of the JSON data.
    Tree,
    /// An image.
    Image,
    /// The JSON as it is.
    Raw,
    /// Not shown at all.
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
    /// When the content last changed (ISO 8601), as MCP's `lastModified`.
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

/// Who a value is meant for (MCP's `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    /// The person using the client.
    User,
    /// The model.
    Assistant,
}
