//! Payload values: strings, bare JSON, canonical and golem-forge values, arrays of them.

use serde::Deserialize;
use serde_json::{Map, Value as Json};
use toolwire_core::{Annotations, DisplayHints, Kind, Source, Value, WellKnown, is_valid_kind};

use crate::media::{self, detect_inline, media_value, structured, structured_with};
use crate::{Diagnostics, Parts, Path, mcp};

/// Keys a canonical value may have besides `kind` and `data`.
const VALUE_KEYS: [&str; 7] = [
    "kind",
    "data",
    "summary",
    "mimeType",
    "display",
    "annotations",
    "_meta",
];

/// Appends the values `json` stands for to `parts`.
pub(crate) fn values(json: Json, path: &Path<'_>, diags: &mut Diagnostics, parts: &mut Parts) {
    match json {
        Json::String(s) => parts.output.push(string_value(s, path, diags)),
        Json::Array(items) if !items.is_empty() && items.iter().all(is_value_like) => {
            for (i, item) in items.into_iter().enumerate() {
                if let Json::Object(map) = item {
                    object(map, &path.index(i), diags, parts);
                }
            }
        }
        Json::Object(map) => object(map, path, diags, parts),
        other => structured(other, path, diags, parts),
    }
}

/// An object that is a value or a content block, as opposed to plain data.
fn is_value_like(item: &Json) -> bool {
    item.get("kind").is_some_and(Json::is_string) || mcp::is_block(item)
}

fn string_value(s: String, path: &Path<'_>, diags: &mut Diagnostics) -> Value {
    match detect_inline(&s) {
        Some(inline) => {
            if let Some(note) = inline.note {
                diags.push(path, note);
            }
            media_value(inline.base64.to_owned(), inline.mime, None)
        }
        None => Value::text(s),
    }
}

fn object(mut map: Map<String, Json>, path: &Path<'_>, diags: &mut Diagnostics, parts: &mut Parts) {
    if !map.contains_key("kind") && mcp::is_block_map(&map) {
        mcp::block(map, path, diags, parts);
        return;
    }
    let Some(kind) = map.get("kind").and_then(Json::as_str).map(str::to_owned) else {
        return structured(Json::Object(map), path, diags, parts);
    };
    if !is_valid_kind(&kind) {
        diags.push(
            path,
            format!("kind {kind:?} is not a valid kind; kept as structured"),
        );
        return structured(Json::Object(map), path, diags, parts);
    }
    let canonical =
        map.contains_key("data") && map.keys().all(|k| VALUE_KEYS.contains(&k.as_str()));
    let data = if canonical {
        map.remove("data").unwrap_or(Json::Null)
    } else {
        // golem-forge phase-2 migration: the fields beside `kind` become `data`.
        let data: Map<String, Json> = map
            .iter()
            .filter(|(k, _)| !VALUE_KEYS[2..].contains(&k.as_str()) && k.as_str() != "kind")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        map.retain(|k, _| VALUE_KEYS.contains(&k.as_str()));
        Json::Object(data)
    };
    match build(kind, data, &map, path, diags) {
        Ok(value) => push_value(value, path, diags, parts),
        Err((data, why)) => {
            if canonical {
                map.insert("data".into(), data);
            } else if let Json::Object(fields) = data {
                map.extend(fields);
            }
            diags.push(path, format!("{why}; kept as structured"));
            structured(Json::Object(map), path, diags, parts);
        }
    }
}

/// Assembles and checks a value; on failure hands `data` back so nothing is lost.
fn build(
    kind: String,
    data: Json,
    map: &Map<String, Json>,
    path: &Path<'_>,
    diags: &mut Diagnostics,
) -> Result<Value, (Json, String)> {
    let field = |key: &str| map.get(key).filter(|v| !v.is_null());
    let mut value = Value::new(Kind::new(kind), data);
    macro_rules! take {
        ($key:literal, $ty:ty) => {
            match field($key).map(<$ty>::deserialize) {
                None => None,
                Some(Ok(v)) => Some(v),
                Some(Err(e)) => return Err((value.data, format!("{}: {e}", $key))),
            }
        };
    }
    value.summary = take!("summary", String);
    value.mime_type = take!("mimeType", String);
    value.display = take!("display", DisplayHints);
    value.annotations = take!("annotations", Annotations);
    value.meta = take!("_meta", Map<String, Json>);
    match value.kind.as_str() {
        // golem-forge's original catch-all.
        "json" => value.kind = WellKnown::Structured.into(),
        // The older image shape, `{url?, base64?, alt?}`, beside the `source` form.
        "image" if value.data.get("source").is_none() => legacy_image(&mut value),
        "file_content" => fill_size(&mut value),
        _ => {}
    }
    if let Err(violations) = value.validate() {
        let first = violations
            .iter()
            .next()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err((
            value.data,
            format!("does not fit kind {}: {first}", value.kind),
        ));
    }
    check_media(value, path, diags)
}

fn legacy_image(value: &mut Value) {
    let Json::Object(data) = &mut value.data else {
        return;
    };
    let source = if let Some(Json::String(b64)) = data.remove("base64") {
        match b64.strip_prefix("data:").and_then(|r| r.split_once(',')) {
            Some((header, rest)) => {
                if value.mime_type.is_none() {
                    value.mime_type = header.strip_suffix(";base64").map(str::to_owned);
                }
                Source::base64(rest)
            }
            None => Source::base64(b64),
        }
    } else if let Some(Json::String(url)) = data.remove("url") {
        match detect_inline(&url) {
            // The legacy shape has no diagnostics to carry a note; the bytes still decide.
            Some(inline) => {
                value.mime_type.get_or_insert(inline.mime);
                Source::base64(inline.base64)
            }
            None => Source::url(url),
        }
    } else {
        return;
    };
    data.insert(
        "source".into(),
        serde_json::to_value(&source).unwrap_or(Json::Null),
    );
}

/// golem-forge's file_content may omit `size`; it is the content's byte length.
fn fill_size(value: &mut Value) {
    if let Json::Object(data) = &mut value.data
        && !data.contains_key("size")
        && let Some(len) = data.get("content").and_then(Json::as_str).map(str::len)
    {
        data.insert("size".into(), Json::from(len as u64));
    }
}

/// Checks inline media against its bytes; a value whose bytes say another format is
/// re-typed, and one whose base64 is broken is returned as an error.
fn check_media(
    mut value: Value,
    path: &Path<'_>,
    diags: &mut Diagnostics,
) -> Result<Value, (Json, String)> {
    let is_media = value.is_kind(WellKnown::Image) || value.is_kind(WellKnown::File);
    let b64 = match value
        .data
        .get("source")
        .and_then(|s| s.get("base64"))
        .and_then(Json::as_str)
    {
        Some(b64) if is_media => b64,
        _ => return Ok(value),
    };
    let checked = match media::check(b64, value.mime_type.as_deref()) {
        Ok(checked) => checked,
        Err(why) => return Err((value.data, format!("source.base64 is {why}"))),
    };
    if let Some(note) = checked.note {
        diags.push(path, note);
    }
    let retyped = media_kind_matches(&value, &checked.mime);
    value.mime_type = Some(checked.mime.clone());
    if retyped {
        return Ok(value);
    }
    // The bytes are another family (e.g. an "image" that is a PDF): rebuild around them.
    let filename = value
        .data
        .get("filename")
        .and_then(Json::as_str)
        .map(str::to_owned);
    let Json::Object(mut data) = std::mem::take(&mut value.data) else {
        return Ok(value);
    };
    let Some(Json::Object(mut source)) = data.remove("source") else {
        return Ok(value);
    };
    let b64 = match source.remove("base64") {
        Some(Json::String(b64)) => b64,
        _ => return Ok(value),
    };
    let rebuilt = media_value(b64, checked.mime, filename);
    Ok(Value {
        kind: rebuilt.kind,
        data: rebuilt.data,
        mime_type: rebuilt.mime_type,
        ..value
    })
}

/// Whether the value's kind (and media kind) already fit `mime`.
fn media_kind_matches(value: &Value, mime: &str) -> bool {
    let wanted = toolwire_core::MediaKind::from_mime(mime);
    match wanted {
        None => value.is_kind(WellKnown::Image),
        Some(kind) => {
            value.is_kind(WellKnown::File)
                && value.data.get("mediaKind") == serde_json::to_value(kind).ok().as_ref()
        }
    }
}

fn push_value(value: Value, path: &Path<'_>, diags: &mut Diagnostics, parts: &mut Parts) {
    if value.is_kind(WellKnown::Structured) {
        let Value { data, .. } = &value;
        if contains_inline_media(data) {
            return structured_with(value, path, diags, parts);
        }
    }
    parts.output.push(value);
}

fn contains_inline_media(json: &Json) -> bool {
    match json {
        Json::String(s) => detect_inline(s).is_some(),
        Json::Array(items) => items.iter().any(contains_inline_media),
        Json::Object(map) => map.values().any(contains_inline_media),
        _ => false,
    }
}
