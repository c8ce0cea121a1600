//! MCP content blocks (text, image, audio, resource links, embedded resources) →
//! values; a `ui://` resource among them becomes an MCP App widget.

use serde_json::{Map, Value as Json};
use toolwire_core::{Annotations, ResourceLinkData, Value, WellKnown};

use super::app::{app_from_resource, is_app_uri, widget};
use crate::media::{self, media_value};
use crate::{Diagnostics, Parts, Path};

/// Whether `json` is an MCP content block: a known `type` with that type's required field.
pub(crate) fn is_block(json: &Json) -> bool {
    json.as_object().is_some_and(is_block_map)
}

pub(crate) fn is_block_map(map: &Map<String, Json>) -> bool {
    let field = |key: &str| map.get(key);
    match map.get("type").and_then(Json::as_str) {
        Some("text") => field("text").is_some_and(Json::is_string),
        Some("image" | "audio") => field("data").is_some_and(Json::is_string),
        Some("resource_link") => field("uri").is_some_and(Json::is_string),
        Some("resource") => field("resource").is_some_and(Json::is_object),
        _ => false,
    }
}

/// A lone content block, outside a `CallToolResult` (e.g. an array of blocks).
pub(crate) fn block(
    map: Map<String, Json>,
    path: &Path<'_>,
    diags: &mut Diagnostics,
    parts: &mut Parts,
) {
    block_with_fallback(map, path, "", diags, parts);
}

pub(super) fn block_with_fallback(
    mut b: Map<String, Json>,
    path: &Path<'_>,
    fallback: &str,
    diags: &mut Diagnostics,
    parts: &mut Parts,
) {
    let annotations = if b.contains_key("annotations") {
        annotations(b.remove("annotations"), path, diags)
    } else {
        None
    };
    let meta = meta_of(b.remove("_meta"));
    // `type` is taken out first so that the builders below see only the payload fields.
    let kind = match b.remove("type") {
        Some(Json::String(kind)) => kind,
        other => {
            b.extend(other.map(|t| ("type".to_owned(), t)));
            String::new()
        }
    };
    let value = match kind.as_str() {
        "text" => text(b),
        "image" | "audio" => inline_media(b, path, diags),
        "resource_link" => resource_link(b, fallback, parts),
        "resource" => embedded(b, path, fallback, diags, parts),
        _ => {
            diags.push(
                path,
                format!("unknown content type {kind:?}; kept as structured"),
            );
            b.insert("type".into(), Json::String(kind));
            Some(Value::structured(Json::Object(b)))
        }
    };
    if let Some(mut value) = value {
        value.annotations = annotations;
        value.meta = meta;
        if value.is_kind(WellKnown::Structured) {
            // A block kept as structured data is treated like any structured data: media
            // inside it becomes values of its own now, so normalizing the result again
            // finds nothing more to move (normalize is idempotent).
            crate::media::structured_with(value, path, diags, parts);
        } else {
            parts.output.push(value);
        }
    }
}

/// A block's `_meta`: an object as is, anything else (but null) wrapped as `{value}`.
pub(crate) fn meta_of(raw: Option<Json>) -> Option<Map<String, Json>> {
    match raw {
        Some(Json::Object(meta)) => Some(meta),
        None | Some(Json::Null) => None,
        Some(other) => Some(Map::from_iter([("value".to_owned(), other)])),
    }
}

pub(crate) fn annotations(
    raw: Option<Json>,
    path: &Path<'_>,
    diags: &mut Diagnostics,
) -> Option<Annotations> {
    let raw = raw.filter(|r| !r.is_null())?;
    match serde_json::from_value::<Annotations>(raw.clone()) {
        Ok(a) => Some(a),
        Err(e) => {
            diags.push(
                &path.key("annotations"),
                format!("{e}; kept under annotations.raw"),
            );
            Some(Annotations {
                extra: Map::from_iter([("raw".to_owned(), raw)]),
                ..Annotations::default()
            })
        }
    }
}

/// Takes a string field; a field of another type stays in the map, so it is kept with
/// the leftovers rather than lost.
fn take_str(b: &mut Map<String, Json>, key: &str) -> Option<String> {
    match b.remove_entry(key)? {
        (_, Json::String(s)) => Some(s),
        (k, other) => {
            b.insert(k, other);
            None
        }
    }
}

/// Fields a block had beyond the ones mapped go into the value's data, beside them.
fn with_leftovers(mut value: Value, leftovers: Map<String, Json>) -> Value {
    if leftovers.is_empty() {
        return value;
    }
    match &mut value.data {
        Json::Object(data) => {
            for (k, v) in leftovers {
                data.entry(k).or_insert(v);
            }
        }
        _ => {
            value.meta.get_or_insert_with(Map::new).extend(leftovers);
        }
    }
    value
}

fn text(mut b: Map<String, Json>) -> Option<Value> {
    let declared = take_str(&mut b, "mimeType");
    let content = take_str(&mut b, "text").unwrap_or_default();
    Some(with_leftovers(text_value(content, declared), b))
}

/// A text block's value: markdown when its MIME type says so, else text keeping any
/// declared type.
pub(crate) fn text_value(content: String, declared: Option<String>) -> Value {
    let markdown = declared
        .as_deref()
        .is_some_and(|m| toolwire_core::mime_essence(m) == "text/markdown");
    if markdown {
        return Value::markdown(content);
    }
    let mut value = Value::text(content);
    value.mime_type = declared;
    value
}

fn inline_media(
    mut b: Map<String, Json>,
    path: &Path<'_>,
    diags: &mut Diagnostics,
) -> Option<Value> {
    let data = take_str(&mut b, "data").unwrap_or_default();
    let declared = take_str(&mut b, "mimeType");
    match media::check(&data, declared.as_deref()) {
        Ok(checked) => {
            if let Some(note) = checked.note {
                diags.push(path, note);
            }
            Some(with_leftovers(media_value(data, checked.mime, None), b))
        }
        Err(why) => {
            diags.push(&path.key("data"), format!("{why}; kept as structured"));
            b.insert("data".into(), Json::String(data));
            if let Some(m) = declared {
                b.insert("mimeType".into(), Json::String(m));
            }
            Some(Value::structured(Json::Object(b)))
        }
    }
}

fn resource_link(mut b: Map<String, Json>, fallback: &str, parts: &mut Parts) -> Option<Value> {
    let mime = take_str(&mut b, "mimeType");
    let uri = take_str(&mut b, "uri").unwrap_or_default();
    if is_app_uri(&uri) {
        parts.widgets.push(widget(uri, mime, None, None, fallback));
        return None;
    }
    let link = ResourceLinkData {
        uri,
        name: take_str(&mut b, "name"),
        description: take_str(&mut b, "description"),
        size: b.remove("size").and_then(|s| s.as_u64()),
    };
    let mut value = Value::resource_link(link);
    // Newer fields (`title`, `icons`, ...) stay in data beside the well-known ones.
    if let Json::Object(data) = &mut value.data {
        data.extend(b);
    }
    value.mime_type = mime;
    Some(value)
}

fn embedded(
    mut b: Map<String, Json>,
    path: &Path<'_>,
    fallback: &str,
    diags: &mut Diagnostics,
    parts: &mut Parts,
) -> Option<Value> {
    let Some(Json::Object(mut r)) = b.remove("resource") else {
        diags.push(path, "resource is not an object; kept as structured");
        return Some(Value::structured(Json::Object(b)));
    };
    let uri = take_str(&mut r, "uri").unwrap_or_default();
    let mime = take_str(&mut r, "mimeType");
    let text = take_str(&mut r, "text");
    let blob = take_str(&mut r, "blob");
    if is_app_uri(&uri) {
        let ui_meta = r.get("_meta").and_then(|m| m.get("ui"));
        let (widget, note) = app_from_resource(uri, mime, text, blob, ui_meta, fallback);
        if let Some(note) = note {
            diags.push(path, note);
        }
        parts.widgets.push(widget);
        return None;
    }
    let value = match (text, blob) {
        (Some(content), Some(b64)) => {
            diags.push(
                path,
                "embedded resource has both text and blob; the blob is kept in data",
            );
            let mut v = Value::file_content(uri.clone(), content);
            v.mime_type = mime;
            r.insert("blob".into(), Json::String(b64));
            v
        }
        (Some(content), None) => {
            let mut v = Value::file_content(uri.clone(), content);
            v.mime_type = mime;
            v
        }
        (None, Some(b64)) => match media::check(&b64, mime.as_deref()) {
            Ok(checked) => {
                if let Some(note) = checked.note {
                    diags.push(path, note);
                }
                media_value(b64, checked.mime, filename_of(&uri))
            }
            Err(why) => {
                diags.push(
                    &path.key("resource").key("blob"),
                    format!("{why}; kept as structured"),
                );
                r.insert("blob".into(), Json::String(b64));
                r.insert("uri".into(), Json::String(uri));
                if let Some(m) = mime {
                    r.insert("mimeType".into(), Json::String(m));
                }
                return Some(Value::structured(Json::Object(r)));
            }
        },
        (None, None) => {
            diags.push(
                path,
                "embedded resource has neither text nor blob; kept as a link",
            );
            let mut v = Value::resource_link(ResourceLinkData {
                uri,
                name: None,
                description: None,
                size: None,
            });
            v.mime_type = mime;
            v
        }
    };
    let mut value = value;
    if let Some(Json::Object(meta)) = r.remove("_meta") {
        value.meta.get_or_insert_with(Map::new).extend(meta);
    }
    r.extend(b);
    Some(with_leftovers(value, r))
}

/// The last path segment of a URI, as a download name.
fn filename_of(uri: &str) -> Option<String> {
    let tail = uri.rsplit('/').next()?.split(['?', '#']).next()?;
    (!tail.is_empty() && !tail.contains(':')).then(|| tail.to_owned())
}
