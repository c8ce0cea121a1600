//! MCP `CallToolResult` → values, widgets and status (every content type of the 2025 spec
//! and the 2026-07-28 protocol fields): the result's shape here, its content blocks in
//! `blocks`, MCP Apps in `app`, the questions of `input_required` in `input`.

mod app;
mod blocks;
mod input;

use serde_json::{Map, Value as Json};
use toolwire_core::{Audience, ErrorInfo, Status, Value, View};

pub use app::app_widget;
pub(crate) use blocks::{annotations, block, is_block, is_block_map, meta_of, text_value};
pub use input::Questions;

use crate::media::{structured, structured_with};
use crate::{Diagnostics, Envelope, Parts, Path, success_envelope};
use app::is_app_block;
use blocks::block_with_fallback;

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
        let questions = match protocol.get("inputRequests") {
            Some(Json::Object(requests)) => Questions::of(requests),
            _ => {
                diags.push(
                    &Path::Root.key("inputRequests"),
                    "input_required without an inputRequests object",
                );
                Questions::default()
            }
        };
        envelope.suspension = Some(questions.suspension());
    }
    if !protocol.is_empty() {
        envelope
            .metadata
            .extra
            .insert(MCP_METADATA_KEY.into(), Json::Object(protocol));
    }
    envelope
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

pub(super) fn joined_text(blocks: &[Json]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Json::as_str))
        .collect();
    texts.join("\n")
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
