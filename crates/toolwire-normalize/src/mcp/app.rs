//! MCP Apps: a `ui://` resource (a link or an embedded resource in the content, or the
//! app a tool declares) as a widget, with the result's text as its fallback.

use serde_json::Value as Json;
use toolwire_core::{MCP_APP_WIDGET, Widget, WidgetApp};

/// Whether a content block is an MCP App's resource (its text is then the fallback).
pub(super) fn is_app_block(block: &Json) -> bool {
    let uri = match block.get("type").and_then(Json::as_str) {
        Some("resource_link") => block.get("uri"),
        Some("resource") => block.get("resource").and_then(|r| r.get("uri")),
        _ => None,
    };
    uri.and_then(Json::as_str).is_some_and(is_app_uri)
}

pub(super) fn is_app_uri(uri: &str) -> bool {
    uri.starts_with("ui://")
}

/// The widget of the MCP App a tool declares (`_meta.ui.resourceUri`) for one of its
/// calls: `resource` is the app's `resources/read` contents item (`uri`, `mimeType`, the
/// HTML as `text` or a base64 `blob`, `_meta.ui`), `call_result` the call's
/// `CallToolResult`, whose text is the widget's fallback. toolwire-mcp attaches it to a
/// complete result; a resource without readable HTML still names the app.
pub fn app_widget(resource: &Json, call_result: &Json) -> Widget {
    let text = |key: &str| resource.get(key).and_then(Json::as_str).map(str::to_owned);
    let blocks = call_result
        .get("content")
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice);
    let fallback = super::joined_text(blocks);
    app_from_resource(
        text("uri").unwrap_or_default(),
        text("mimeType"),
        text("text"),
        text("blob"),
        resource.get("_meta").and_then(|m| m.get("ui")),
        &fallback,
    )
    .0
}

/// An app's widget from its resource's fields; the note says why its HTML was dropped
/// (a `blob` that is not base64 UTF-8).
pub(super) fn app_from_resource(
    uri: String,
    mime: Option<String>,
    text: Option<String>,
    blob: Option<String>,
    ui_meta: Option<&Json>,
    fallback: &str,
) -> (Widget, Option<&'static str>) {
    let (html, note) = match (text, blob) {
        (Some(t), _) => (Some(t), None),
        (None, Some(b64)) => match decode_utf8(&b64) {
            Some(html) => (Some(html), None),
            None => (
                None,
                Some("ui:// blob is not base64 UTF-8 HTML; the widget has no inline HTML"),
            ),
        },
        (None, None) => (None, None),
    };
    (widget(uri, mime, html, ui_meta, fallback), note)
}

fn decode_utf8(b64: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    String::from_utf8(bytes).ok()
}

/// An app's widget: its `ui://` URI, the HTML when known, and the fallback text that
/// stands for it where no app can run (the terminal, the model).
pub(super) fn widget(
    uri: String,
    mime: Option<String>,
    html: Option<String>,
    ui_meta: Option<&Json>,
    fallback: &str,
) -> Widget {
    let fallback = if fallback.trim().is_empty() {
        format!("Interactive view {uri} (open it in the toolwire web app)")
    } else {
        fallback.to_owned()
    };
    Widget {
        widget: MCP_APP_WIDGET.to_owned(),
        data: serde_json::json!({ "uri": uri }),
        fallback,
        app: Some(WidgetApp {
            uri,
            mime_type: mime,
            html,
            html_blob: None,
            csp: ui_meta.and_then(|m| m.get("csp")).cloned(),
            permissions: ui_meta.and_then(|m| m.get("permissions")).cloned(),
        }),
    }
}
