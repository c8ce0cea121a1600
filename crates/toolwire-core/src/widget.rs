//! Display widgets and the resource index of externalized media (docs/contracts.md,
//! "Display widgets" and "Media persistence and rehydration").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// A display-only output for the person. Never sent to the model: the model already has
/// the tool's `output`. `fallback` is what any consumer without a renderer shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Widget {
    /// Widget type identifier, e.g. `weather-forecast`.
    pub widget: String,
    /// The widget's data, in the shape its renderer expects.
    pub data: Json,
    /// Plain text for consumers that cannot render the widget; never empty.
    pub fallback: String,
    /// Set when the widget is an MCP Apps / MCP-UI `ui://` HTML resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<WidgetApp>,
}

/// The widget id given to MCP Apps resources, whose real identity is `app.uri`.
pub const MCP_APP_WIDGET: &str = "mcp_app";

impl Widget {
    /// A widget of type `widget` with its data and the text to show without a renderer.
    pub fn new(widget: impl Into<String>, data: Json, fallback: impl Into<String>) -> Self {
        Widget {
            widget: widget.into(),
            data,
            fallback: fallback.into(),
            app: None,
        }
    }
}

/// An MCP App: HTML that a browser must run sandboxed, in an origin that is not the app's
/// own (docs/contracts.md, "Invariants", 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetApp {
    /// A `ui://` URI.
    pub uri: String,
    /// The MIME type of the HTML resource (MCP Apps: `text/html;profile=mcp-app`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The HTML, when the tool embedded it or the host read it and it is not stored yet
    /// (results stored before `html_blob` existed keep it here too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    /// The stored HTML's blob key (`blake3:…`), in place of `html`: an app's page is
    /// kept once, by its content, not again in every result it shows (a PDF viewer's
    /// is 4.4 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html_blob: Option<String>,
    /// The resource's `_meta.ui.csp`: the origins it may reach, which the host's sandbox
    /// turns into its Content-Security-Policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Json>,
    /// The resource's `_meta.ui.permissions` (camera, microphone, ...), granted only if
    /// the host agrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Json>,
}

/// One externalized blob that an `output` value references, so a consumer can list or
/// prefetch media without walking every value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The blob key, `blake3:<hex>`.
    pub uri: String,
    /// Image, audio, video or other binary.
    pub kind: ResourceKind,
    /// The blob's MIME type.
    pub mime_type: String,
    /// The blob's size in bytes.
    pub size: u64,
    /// The file name it came with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// What an externalized blob holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    /// An image.
    Image,
    /// Audio.
    Audio,
    /// Video.
    Video,
    /// Anything else (documents, archives).
    Binary,
}
