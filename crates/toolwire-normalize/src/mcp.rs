//! MCP `CallToolResult` → values, widgets and status (every content type of the 2025 spec).

use serde_json::{Map, Value as Json};
use toolwire_core::{
    Annotations, Audience, ErrorInfo, MCP_APP_WIDGET, ResourceLinkData, Status, Suspension,
    SuspensionReason, Value, View, WellKnown, Widget, WidgetApp,
};

use crate::media::{self, media_value};
use crate::payload::{structured, structured_with};
use crate::{Diagnostics, Envelope, Parts, Path, success_envelope};

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

/// Where a `CallToolResult`'s protocol fields (`resultType`, `inputRequests`,
/// `requestState`) and any unknown top-level fields are kept: `metadata.mcp`. They say how
/// to read the result, or are not understood; either way they are not content, so they
/// never reach `output`, the model or the person.
pub const MCP_METADATA_KEY: &str = "mcp";

/// The 2026-07-28 protocol fields of a `CallToolResult`.
const PROTOCOL_FIELDS: [&str; 3] = ["resultType", "inputRequests", "requestState"];

/// A `CallToolResult` has `content` blocks, `structuredContent` or a `resultType`, and no
/// envelope keys.
pub(crate) fn is_call_tool_result(map: &Map<String, Json>) -> bool {
    let blocks = map
        .get("content")
        .and_then(Json::as_array)
        .is_some_and(|items| {
            items
                .iter()
                .all(|b| b.get("type").is_some_and(Json::is_string))
        });
    (blocks
        || map.contains_key("structuredContent")
        || map.get("resultType").is_some_and(Json::is_string))
        && !map.contains_key("kind")
        && !map.contains_key("status")
}

pub(crate) fn call_tool_result(mut map: Map<String, Json>, diags: &mut Diagnostics) -> Envelope {
    let mut protocol = Map::new();
    for field in PROTOCOL_FIELDS {
        if let Some((k, v)) = map.remove_entry(field) {
            protocol.insert(k, v);
        }
    }
    let is_error = match map.remove("isError") {
        Some(Json::Bool(b)) => b,
        None | Some(Json::Null) => false,
        // Not a boolean: kept with the unknown fields below, not guessed at.
        Some(other) => {
            map.insert("isError".into(), other);
            false
        }
    };
    let structured_content = map.remove("structuredContent");
    let blocks = match map.remove("content") {
        Some(Json::Array(blocks)) => blocks,
        Some(other) => {
            diags.push(
                &Path::Root.key("content"),
                "content is not an array; kept as structured",
            );
            vec![other]
        }
        None => Vec::new(),
    };
    // The spec says servers SHOULD send structuredContent's JSON text as a text block
    // too, and servers wrap their text in it: both channels are kept, the person is shown
    // one and the model sent one (docs/contracts.md, "Twins").
    let twin = structured_content
        .as_ref()
        .map_or(Twin::None, |sc| twin_of(sc, &blocks));
    if structured_content.is_some()
        && twin == Twin::None
        && let Some(i) = blocks.iter().position(|b| parses_as_json(b).is_some())
    {
        // A JSON text block beside structuredContent is meant as its twin; one that
        // says something else is kept (both are shown), and the mismatch recorded.
        diags.push(
            &Path::Root.key("content").index(i),
            "this JSON text differs from structuredContent; both are kept",
        );
    }
    // The text blocks, joined, are the error message or an app widget's fallback; only
    // then are they copied.
    let needs_text = is_error || blocks.iter().any(is_app_block);
    let fallback = if needs_text {
        joined_text(&blocks)
    } else {
        String::new()
    };
    let mut parts = Parts::default();
    let root = Path::Root;
    let content = root.key("content");
    for (i, block) in blocks.into_iter().enumerate() {
        let path = content.index(i);
        let is_text = block.get("type").and_then(Json::as_str) == Some("text");
        if is_error && is_text {
            // The error's message is made of the text blocks.
            continue;
        }
        let from = parts.output.len();
        match block {
            Json::Object(b) if is_block_map(&b) => {
                block_with_fallback(b, &path, &fallback, diags, &mut parts)
            }
            other => {
                diags.push(&path, "not an MCP content block; kept as structured");
                structured(other, &path, diags, &mut parts);
            }
        }
        if matches!(twin, Twin::JsonText(t) if t == i) {
            // The structured view is the richer one: its text is for the model.
            for_only(&mut parts.output[from..], Audience::Assistant);
        }
    }
    if let Some(sc) = structured_content {
        let from = parts.output.len();
        let value = Value::structured(sc).mime("application/json");
        structured_with(
            value,
            &Path::Root.key("structuredContent"),
            diags,
            &mut parts,
        );
        match twin {
            Twin::JsonText(_) => for_only(&mut parts.output[from..], Audience::User),
            // A wrapper repeats the blocks: kept, shown to nobody and not sent.
            Twin::Wrapper => {
                for_only(&mut parts.output[from..], Audience::User);
                for value in &mut parts.output[from..] {
                    value
                        .display
                        .get_or_insert_with(Default::default)
                        .preferred_view = Some(View::Hidden);
                }
            }
            Twin::None => {}
        }
    }
    if let Some(legacy) = map.remove("toolResult") {
        // The 2024-11-05 compatibility form: `toolResult` stands for the content.
        let path = Path::Root.key("toolResult");
        structured(legacy, &path, diags, &mut parts);
    }
    let meta = map.remove("_meta");
    // Everything mapped was removed above: what is left is unknown.
    let unknown = map;
    if !unknown.is_empty() {
        let keys: Vec<&str> = unknown.keys().map(String::as_str).collect();
        diags.push(
            &Path::Root,
            format!("fields {keys:?} are not part of CallToolResult; kept in metadata.mcp"),
        );
        protocol.extend(unknown);
    }
    let input_required =
        protocol.get("resultType").and_then(Json::as_str) == Some("input_required");
    let mut envelope = result_envelope(parts, is_error.then_some(fallback), meta);
    if input_required {
        envelope.status = Status::Suspended;
        envelope.error = None;
        envelope.suspension = Some(input_suspension(protocol.get("inputRequests"), diags));
    }
    if !protocol.is_empty() {
        envelope
            .metadata
            .extra
            .insert(MCP_METADATA_KEY.into(), Json::Object(protocol));
    }
    envelope
}

/// The suspension of an `input_required` result (Multi Round-Trip Requests): what its
/// elicitation requests ask, as one prompt and one schema. One request is asked as it is;
/// several are asked together, the answer an object keyed like `inputRequests`. The id is
/// left empty for the call's identity to fill in; `requestState` stays in `metadata.mcp`
/// for the retry.
fn input_suspension(requests: Option<&Json>, diags: &mut Diagnostics) -> Suspension {
    let path = Path::Root.key("inputRequests");
    let mut asked: Vec<(&str, String, Option<Json>)> = Vec::new();
    let mut other_methods: Vec<&str> = Vec::new();
    match requests {
        Some(Json::Object(requests)) => {
            for (key, request) in requests {
                let method = request.get("method").and_then(Json::as_str).unwrap_or("");
                let params = request.get("params");
                if method != "elicitation/create" {
                    other_methods.push(method);
                    continue;
                }
                let message = params
                    .and_then(|p| p.get("message"))
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_owned();
                let url = params
                    .filter(|p| p.get("mode").and_then(Json::as_str) == Some("url"))
                    .and_then(|p| p.get("url"))
                    .and_then(Json::as_str);
                let prompt = match url {
                    Some(url) => format!("{message}\nThe server asks you to open {url}"),
                    None => message,
                };
                let schema = params.and_then(|p| p.get("requestedSchema")).cloned();
                asked.push((key, prompt, schema));
            }
        }
        _ => diags.push(&path, "input_required without an inputRequests object"),
    }
    let (prompt, input_schema) = match asked.as_slice() {
        [(_, prompt, schema)] => (prompt.clone(), schema.clone()),
        [] => {
            let methods = other_methods.join(", ");
            (
                format!("The MCP server needs more input to continue ({methods})."),
                None,
            )
        }
        many => {
            let prompt: Vec<&str> = many.iter().map(|(_, p, _)| p.as_str()).collect();
            let properties: Map<String, Json> = many
                .iter()
                .map(|(k, _, s)| ((*k).to_owned(), s.clone().unwrap_or(Json::Bool(true))))
                .collect();
            let required: Vec<&str> = many.iter().map(|(k, _, _)| *k).collect();
            let schema = serde_json::json!({
                "type": "object",
                "properties": properties,
                "required": required,
            });
            (prompt.join("\n"), Some(schema))
        }
    };
    let prompt = if prompt.trim().is_empty() {
        "The MCP server needs your input to continue.".to_owned()
    } else {
        prompt
    };
    Suspension {
        id: String::new(),
        reason: SuspensionReason::Input,
        prompt,
        input_schema,
    }
}

/// The envelope of a mapped `CallToolResult`: an error when `error_text` is given (the
/// joined text blocks), and the result's `_meta` kept in metadata.
pub(crate) fn result_envelope(
    parts: Parts,
    error_text: Option<String>,
    meta: Option<Json>,
) -> Envelope {
    let mut envelope = success_envelope(parts);
    if let Some(text) = error_text {
        envelope.status = Status::Error;
        envelope.error = Some(ErrorInfo {
            message: if text.trim().is_empty() {
                "the tool reported an error without a message".to_owned()
            } else {
                text
            },
            code: None,
            details: None,
        });
    }
    if let Some(meta) = meta.filter(|m| !m.is_null()) {
        envelope.metadata.extra.insert("_meta".into(), meta);
    }
    envelope
}

fn joined_text(blocks: &[Json]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Json::as_str))
        .collect();
    texts.join("\n")
}

fn is_app_block(block: &Json) -> bool {
    let uri = match block.get("type").and_then(Json::as_str) {
        Some("resource_link") => block.get("uri"),
        Some("resource") => block.get("resource").and_then(|r| r.get("uri")),
        _ => None,
    };
    uri.and_then(Json::as_str).is_some_and(is_app_uri)
}

/// How `structuredContent` repeats the content blocks (docs/contracts.md, "Twins").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Twin {
    None,
    /// The text block at this index is the structured value's JSON (or the JSON of its
    /// one wrapped object or array): the person sees the structured value, the model
    /// gets the text.
    JsonText(usize),
    /// The structured value is one key around the blocks themselves, or around their
    /// text (server-filesystem's `{"content": listing}`, FastMCP's `{"result": 42}`):
    /// the blocks are shown and sent, the wrapper only kept.
    Wrapper,
}

fn twin_of(sc: &Json, blocks: &[Json]) -> Twin {
    if let Some(i) = blocks.iter().position(|b| is_json_twin(b, sc)) {
        return Twin::JsonText(i);
    }
    let Some((_, inner)) = sc
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
    else {
        return Twin::None;
    };
    if matches!(inner, Json::Array(a) if a.as_slice() == blocks && !blocks.is_empty()) {
        return Twin::Wrapper;
    }
    let all_text = !blocks.is_empty()
        && blocks
            .iter()
            .all(|b| b.get("type").and_then(Json::as_str) == Some("text"));
    if !all_text {
        return Twin::None;
    }
    let text = joined_text(blocks);
    match inner {
        Json::String(s) if s.trim() == text.trim() => Twin::Wrapper,
        Json::Object(_) | Json::Array(_) => blocks
            .iter()
            .position(|b| is_json_twin(b, inner))
            .map_or(Twin::None, Twin::JsonText),
        scalar => match serde_json::from_str::<Json>(text.trim()) {
            Ok(parsed) if &parsed == scalar => Twin::Wrapper,
            _ => Twin::None,
        },
    }
}

/// Keeps `values` for one audience only.
fn for_only(values: &mut [Value], audience: Audience) {
    for value in values {
        value
            .annotations
            .get_or_insert_with(Default::default)
            .audience = Some(vec![audience]);
    }
}

fn is_json_twin(block: &Json, structured_content: &Json) -> bool {
    parses_as_json(block).is_some_and(|parsed| &parsed == structured_content)
}

/// A text block's JSON object or array, if that is what its text is.
fn parses_as_json(block: &Json) -> Option<Json> {
    if block.get("type").and_then(Json::as_str) != Some("text") {
        return None;
    }
    let text = block.get("text").and_then(Json::as_str)?;
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<Json>(text).ok()
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

fn block_with_fallback(
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
            crate::payload::structured_with(value, path, diags, parts);
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

fn is_app_uri(uri: &str) -> bool {
    uri.starts_with("ui://")
}

fn app_widget(
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
            csp: ui_meta.and_then(|m| m.get("csp")).cloned(),
            permissions: ui_meta.and_then(|m| m.get("permissions")).cloned(),
        }),
    }
}

fn resource_link(mut b: Map<String, Json>, fallback: &str, parts: &mut Parts) -> Option<Value> {
    let mime = take_str(&mut b, "mimeType");
    let uri = take_str(&mut b, "uri").unwrap_or_default();
    if is_app_uri(&uri) {
        parts
            .widgets
            .push(app_widget(uri, mime, None, None, fallback));
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
        let html = match (text, blob) {
            (Some(t), _) => Some(t),
            (None, Some(b64)) => decode_utf8(&b64).or_else(|| {
                diags.push(
                    path,
                    "ui:// blob is not base64 UTF-8 HTML; the widget has no inline HTML",
                );
                None
            }),
            (None, None) => None,
        };
        let ui_meta = r.get("_meta").and_then(|m| m.get("ui"));
        parts
            .widgets
            .push(app_widget(uri, mime, html, ui_meta, fallback));
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

fn decode_utf8(b64: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    String::from_utf8(bytes).ok()
}

/// The last path segment of a URI, as a download name.
fn filename_of(uri: &str) -> Option<String> {
    let tail = uri.rsplit('/').next()?.split(['?', '#']).next()?;
    (!tail.is_empty() && !tail.contains(':')).then(|| tail.to_owned())
}
