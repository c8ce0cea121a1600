//! The typed fast path of `normalize_bytes`: an MCP `CallToolResult` made only of text,
//! image and audio blocks is parsed straight into structs, skipping the generic JSON tree.
//!
//! Parsing into structs costs less than parsing into a `serde_json::Value`, which is what
//! keeps normalizing many small results close to the cost of parsing them. Anything the
//! fast path does not cover exactly (an unknown or null field, another block type,
//! `structuredContent`, invalid media, deep nesting) returns `None`, and the caller takes
//! the generic path; a property test holds the two to the same results.

use serde::{Deserialize, Deserializer};
use serde_json::Value as Json;

use crate::depth::exceeds_from;
use crate::mcp::{annotations, meta_of, result_envelope, text_value};
use crate::media::{self, media_value};
use crate::{Diagnostics, Envelope, Parts, Path};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastResult {
    content: Vec<FastBlock>,
    #[serde(default, rename = "isError", deserialize_with = "present")]
    is_error: Option<bool>,
    #[serde(default, rename = "_meta", deserialize_with = "present")]
    meta: Option<Json>,
    /// Only `"complete"` is taken here; `input_required` and the rest go the generic way.
    #[serde(default, rename = "resultType", deserialize_with = "present")]
    result_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastBlock {
    #[serde(rename = "type")]
    kind: FastKind,
    #[serde(default, deserialize_with = "present")]
    text: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<String>,
    #[serde(default, rename = "mimeType", deserialize_with = "present")]
    mime_type: Option<String>,
    #[serde(default, deserialize_with = "present")]
    annotations: Option<Json>,
    #[serde(default, rename = "_meta", deserialize_with = "present")]
    meta: Option<Json>,
}

#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum FastKind {
    Text,
    Image,
    Audio,
}

/// A present field must hold a `T`: an explicit `null` where `T` is not JSON fails the
/// fast parse, because the generic path keeps such a null, and so must we.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Depth at which a block's `annotations`/`_meta` sit in the payload (root, content, block).
const BLOCK_FIELD_DEPTH: usize = 3;

pub(crate) fn try_mcp(raw: &[u8], diags: &mut Diagnostics) -> Option<Envelope> {
    envelope(serde_json::from_slice(raw).ok()?, diags)
}

/// [`try_mcp`] of text already known to be UTF-8 (the packages' JSON text): read as a
/// `str`, serde_json does not check each string's bytes again.
pub(crate) fn try_mcp_text(raw: &str, diags: &mut Diagnostics) -> Option<Envelope> {
    envelope(serde_json::from_str(raw).ok()?, diags)
}

fn envelope(parsed: FastResult, diags: &mut Diagnostics) -> Option<Envelope> {
    if parsed
        .result_type
        .as_deref()
        .is_some_and(|t| t != "complete")
    {
        return None;
    }
    let deep = |v: &Option<Json>, depth| v.as_ref().is_some_and(|v| exceeds_from(v, depth));
    if deep(&parsed.meta, 1)
        || parsed
            .content
            .iter()
            .any(|b| deep(&b.annotations, BLOCK_FIELD_DEPTH) || deep(&b.meta, BLOCK_FIELD_DEPTH))
    {
        return None;
    }
    let is_error = parsed.is_error.unwrap_or(false);
    // One pass; a block the fast path cannot take rolls back what it recorded, so the
    // generic path starts clean.
    let mark = diags.0.len();
    let mut error_text: Option<Vec<String>> = is_error.then(Vec::new);
    let mut parts = Parts::default();
    parts.output.reserve_exact(parsed.content.len());
    let root = Path::Root;
    let content = root.key("content");
    for (i, block) in parsed.content.into_iter().enumerate() {
        let path = content.index(i);
        let media = match (&block.kind, &block.text, &block.data) {
            (FastKind::Text, Some(_), None) => None,
            (FastKind::Image | FastKind::Audio, None, Some(data)) => {
                match media::check(data, block.mime_type.as_deref()) {
                    Ok(m) => Some(m),
                    Err(_) => {
                        diags.0.truncate(mark);
                        return None;
                    }
                }
            }
            _ => {
                diags.0.truncate(mark);
                return None;
            }
        };
        if let (Some(texts), Some(text)) = (&mut error_text, &block.text) {
            // An error's text blocks are its message, as on the generic path.
            texts.push(text.clone());
            continue;
        }
        // Diagnostics in the generic path's order: annotations, then the media note.
        let annotations = annotations(block.annotations, &path, diags);
        let mut value = match (block.text, block.data, media) {
            (Some(text), _, _) => text_value(text, block.mime_type),
            (None, Some(data), Some(m)) => {
                if let Some(note) = m.note {
                    diags.push(&path, note);
                }
                media_value(data, m.mime, None)
            }
            _ => {
                diags.0.truncate(mark);
                return None;
            }
        };
        value.annotations = annotations;
        value.meta = meta_of(block.meta);
        parts.output.push(value);
    }
    let mut envelope = result_envelope(parts, error_text.map(|t| t.join("\n")), parsed.meta);
    if let Some(result_type) = parsed.result_type {
        envelope.metadata.extra.insert(
            crate::MCP_METADATA_KEY.into(),
            serde_json::json!({ "resultType": result_type }),
        );
    }
    Some(envelope)
}
