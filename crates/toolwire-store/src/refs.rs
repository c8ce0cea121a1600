//! Which blobs a message references: `{blob, size}` sources, resource URIs, `rawRef`
//! and MCP Apps' stored HTML.

use std::collections::BTreeSet;

use serde_json::Value as Json;
use toolwire_core::{ToolResult, is_blob_key};

use toolwire_core::Message;

/// Blob keys referenced anywhere in a message, deduplicated and sorted.
pub fn message_blob_refs(content: &Message) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    match content {
        Message::ToolResult(result) => result_refs(result, &mut keys),
        Message::Widget { widget, .. } => widget_refs(widget, &mut keys),
        Message::System { .. } | Message::User { .. } | Message::Assistant { .. } => {}
    }
    keys
}

/// Blob keys a tool result references.
pub fn result_blob_refs(result: &ToolResult) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    result_refs(result, &mut keys);
    keys
}

/// Blob references in places that must hold a blob key (media sources, resource URIs,
/// `rawRef`, an app's `htmlBlob`) that are not well-formed keys.
#[cfg(feature = "backends")]
pub(crate) fn malformed_blob_refs(result: &ToolResult) -> Vec<String> {
    let mut bad = Vec::new();
    for value in &result.output {
        if let Some(Json::String(key)) = value.data.get("source").and_then(|s| s.get("blob"))
            && !is_blob_key(key)
        {
            bad.push(key.clone());
        }
    }
    let others = result
        .resources
        .iter()
        .map(|r| &r.uri)
        .filter(|uri| uri.starts_with("blake3:"))
        .chain(result.metadata.raw_ref.as_ref())
        .chain(app_html_keys(&result.widgets));
    bad.extend(others.filter(|k| !is_blob_key(k)).cloned());
    bad
}

fn result_refs(result: &ToolResult, keys: &mut BTreeSet<String>) {
    for value in &result.output {
        walk(&value.data, keys);
    }
    for widget in &result.widgets {
        widget_refs(widget, keys);
    }
    for resource in &result.resources {
        if is_blob_key(&resource.uri) {
            keys.insert(resource.uri.clone());
        }
    }
    if let Some(raw) = result
        .metadata
        .raw_ref
        .as_deref()
        .filter(|k| is_blob_key(k))
    {
        keys.insert(raw.to_owned());
    }
}

/// A widget's blobs: those its data names, and its app's stored HTML.
fn widget_refs(widget: &toolwire_core::Widget, keys: &mut BTreeSet<String>) {
    walk(&widget.data, keys);
    keys.extend(
        app_html_keys(std::slice::from_ref(widget))
            .filter(|k| is_blob_key(k))
            .cloned(),
    );
}

/// The `htmlBlob` keys of the apps among `widgets`.
fn app_html_keys(widgets: &[toolwire_core::Widget]) -> impl Iterator<Item = &String> {
    widgets
        .iter()
        .filter_map(|w| w.app.as_ref().and_then(|app| app.html_blob.as_ref()))
}

/// Finds `{"blob": "blake3:…"}` objects at any depth, so custom kinds and widget data
/// that carry a blob source are kept by `gc` too.
fn walk(json: &Json, keys: &mut BTreeSet<String>) {
    match json {
        Json::Object(map) => {
            if let Some(Json::String(key)) = map.get("blob")
                && is_blob_key(key)
            {
                keys.insert(key.clone());
            }
            map.values().for_each(|v| walk(v, keys));
        }
        Json::Array(items) => items.iter().for_each(|v| walk(v, keys)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire_core::{CallRef, Source, Value, Widget};

    #[test]
    fn finds_sources_resources_raw_and_widget_blobs() {
        let k = |c: char| format!("blake3:{}", c.to_string().repeat(64));
        let mut r = ToolResult::success(
            CallRef::new("c1", "t"),
            Value::image(Source::blob(k('a'), 3), "image/png"),
        )
        .with_widget(Widget::new(
            "w",
            json!({"nested": [{"blob": k('b'), "size": 1}]}),
            "w",
        ));
        r.metadata.raw_ref = Some(k('c'));
        r.output
            .push(Value::structured(json!({"blob": "not-a-key"})));
        let refs = result_blob_refs(&r);
        assert_eq!(
            refs.into_iter().collect::<Vec<_>>(),
            vec![k('a'), k('b'), k('c')]
        );
    }
}
