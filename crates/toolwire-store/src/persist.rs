//! The persistence step: inline media → blobs + resources, and MCP Apps' HTML → blobs
//! (docs/contracts.md, "Media persistence and rehydration").
//!
//! Large base64 is decoded in slices straight into a blob writer, so a 20 MB video costs
//! one slice of decoded bytes in memory, not 20 MB.

use std::borrow::Cow;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::{Map, Value as Json};
use toolwire_core::{MediaKind, Resource, ResourceKind, ToolResult, WellKnown, is_blob_key};

use crate::blob::{BlobRef, BlobStore};
use crate::error::{Result, StoreError};

/// Set to `1` (or `true`) to keep each raw tool payload as a blob, referenced from
/// `metadata.rawRef`, for debugging.
pub const RAW_ENV: &str = "TOOLWIRE_DEBUG_TOOL_RESULT_RAW";

/// Base64 characters decoded per slice: a multiple of 4, so every slice but the last is
/// whole quanta without padding.
const SLICE_CHARS: usize = 1 << 20;
/// Media (and raw payloads) up to this size are stored whole with one `put`; larger
/// ones are streamed in slices, so memory stays bounded whatever a tool sends. 5 MiB is one
/// multipart part: below it, a streamed S3 upload has no parallelism to gain.
const WHOLE_PUT_BYTES: u64 = 5 << 20;

/// How results' media is externalized before they are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistConfig {
    /// Images and documents with more decoded bytes than this are externalized; audio and
    /// video always are.
    pub inline_threshold: u64,
    /// Store the raw payload as a blob and reference it from `metadata.rawRef`.
    pub keep_raw: bool,
}

impl Default for PersistConfig {
    fn default() -> Self {
        PersistConfig {
            inline_threshold: 1024,
            keep_raw: false,
        }
    }
}

impl PersistConfig {
    /// Defaults, with `keep_raw` from `TOOLWIRE_DEBUG_TOOL_RESULT_RAW`.
    pub fn from_env() -> Self {
        let keep_raw = std::env::var(RAW_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true"));
        PersistConfig {
            keep_raw,
            ..PersistConfig::default()
        }
    }
}

/// Moves inline media of `result` into `blobs`, replacing each source by `{blob, size}`,
/// and lists every blob the result references in `resources`. `raw` is stored only when
/// `config.keep_raw` is set. On error nothing in history changes; blobs already written
/// are unreferenced and `gc` removes them.
pub async fn persist(
    mut result: ToolResult,
    raw: Option<&[u8]>,
    blobs: &dyn BlobStore,
    config: &PersistConfig,
) -> Result<ToolResult> {
    let mut found = Vec::new();
    for (i, value) in result.output.iter_mut().enumerate() {
        let kind = if value.is_kind(WellKnown::Image) {
            ResourceKind::Image
        } else if value.is_kind(WellKnown::File) {
            file_kind(&value.data, value.mime_type.as_deref())
        } else {
            continue;
        };
        let Some(data) = value.data.as_object_mut() else {
            continue;
        };
        let filename = data
            .get("filename")
            .and_then(Json::as_str)
            .map(str::to_owned);
        let Some(source) = data.get_mut("source").and_then(Json::as_object_mut) else {
            continue;
        };
        let (key, size) = match inline_base64(source) {
            Some(b64) => {
                let decoded_len = toolwire_core::base64_decoded_len(b64);
                let always = matches!(kind, ResourceKind::Audio | ResourceKind::Video);
                if !always && decoded_len <= config.inline_threshold {
                    continue;
                }
                let path = format!("output[{i}].data.source");
                let (stored, sniffed) = store_base64(blobs, b64, &path).await?;
                *source = blob_source(&stored);
                if value.mime_type.is_none() {
                    value.mime_type = sniffed.map(str::to_owned);
                }
                (stored.key.to_string(), stored.size)
            }
            None => match (
                source.get("blob").and_then(Json::as_str),
                source.get("size"),
            ) {
                (Some(key), Some(size)) if is_blob_key(key) => {
                    (key.to_owned(), size.as_u64().unwrap_or(0))
                }
                _ => continue,
            },
        };
        let mime_type = value
            .mime_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        found.push(Resource {
            uri: key,
            kind,
            mime_type,
            size,
            filename,
        });
    }
    for resource in found {
        if !result.resources.iter().any(|r| r.uri == resource.uri) {
            result.resources.push(resource);
        }
    }
    // An app's HTML is the same page in every result it shows (4.4 MB for a PDF
    // viewer): stored once, by its content, and named by its key.
    for (i, widget) in result.widgets.iter_mut().enumerate() {
        let Some(app) = widget.app.as_mut() else {
            continue;
        };
        let Some(html) = app.html.take() else {
            continue;
        };
        let path = format!("widgets[{i}].app.html");
        let stored = store_bytes(blobs, html.as_bytes())
            .await
            .map_err(media_error(&path))?;
        app.html_blob = Some(stored.key.to_string());
    }
    if let (true, Some(raw)) = (config.keep_raw, raw) {
        let stored = store_bytes(blobs, raw).await?;
        result.metadata.raw_ref = Some(stored.key.to_string());
    }
    Ok(result)
}

/// Whether [`persist`] would move anything of `result` to the blob store: an image or a
/// file whose bytes are inline, or an app's HTML. A cheap look, so callers can skip copying results
/// without media (a 200 MB log) just to persist nothing.
pub fn has_inline_media(result: &ToolResult) -> bool {
    let app_html = result
        .widgets
        .iter()
        .any(|w| w.app.as_ref().is_some_and(|app| app.html.is_some()));
    app_html
        || result.output.iter().any(|value| {
            (value.is_kind(WellKnown::Image) || value.is_kind(WellKnown::File))
                && value
                    .data
                    .get("source")
                    .and_then(Json::as_object)
                    .and_then(inline_base64)
                    .is_some()
        })
}

fn file_kind(data: &Json, mime: Option<&str>) -> ResourceKind {
    let media = data
        .get("mediaKind")
        .and_then(|m| serde_json::from_value::<MediaKind>(m.clone()).ok())
        .or_else(|| mime.and_then(MediaKind::from_mime));
    match media {
        Some(MediaKind::Audio) => ResourceKind::Audio,
        Some(MediaKind::Video) => ResourceKind::Video,
        _ => ResourceKind::Binary,
    }
}

fn inline_base64(source: &Map<String, Json>) -> Option<&str> {
    match source.get("base64") {
        Some(Json::String(s)) if source.len() == 1 => Some(s),
        _ => None,
    }
}

fn blob_source(stored: &BlobRef) -> Map<String, Json> {
    let mut map = Map::new();
    map.insert("blob".into(), Json::String(stored.key.to_string()));
    map.insert("size".into(), Json::from(stored.size));
    map
}

/// Stores bytes already in memory: up to [`WHOLE_PUT_BYTES`] with one `put`, larger ones
/// in slices so they are not copied whole.
pub(crate) async fn store_bytes(blobs: &dyn BlobStore, bytes: &[u8]) -> Result<BlobRef> {
    if bytes.len() as u64 <= WHOLE_PUT_BYTES {
        return blobs.put(bytes).await;
    }
    let mut writer = blobs.writer(Some(bytes.len() as u64)).await?;
    for slice in bytes.chunks(SLICE_CHARS) {
        writer.write(slice).await?;
    }
    writer.finish().await
}

fn engine(url_safe: bool) -> GeneralPurpose {
    let config = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    let alphabet = if url_safe {
        &alphabet::URL_SAFE
    } else {
        &alphabet::STANDARD
    };
    GeneralPurpose::new(alphabet, config)
}

/// Decodes and stores base64. The strict pass costs no extra scan of the text; only text
/// it rejects (line breaks, the URL-safe alphabet, a data: prefix) is cleaned and retried.
async fn store_base64(
    blobs: &dyn BlobStore,
    b64: &str,
    path: &str,
) -> Result<(BlobRef, Option<&'static str>)> {
    match decode_into(blobs, b64, &engine(false), path).await {
        Err(StoreError::InvalidBase64 { .. }) => {
            let cleaned = clean_base64(b64);
            let url_safe = cleaned.contains(['-', '_']);
            decode_into(blobs, &cleaned, &engine(url_safe), path).await
        }
        other => other,
    }
}

fn clean_base64(b64: &str) -> Cow<'_, str> {
    let body = match b64.split_once(";base64,") {
        Some((prefix, rest)) if prefix.starts_with("data:") => rest,
        _ => b64,
    };
    if body.bytes().any(|b| b.is_ascii_whitespace()) {
        Cow::Owned(body.chars().filter(|c| !c.is_ascii_whitespace()).collect())
    } else {
        Cow::Borrowed(body)
    }
}

/// A failure of the blob store itself, named by the media it was storing; limits and bad
/// input keep their own errors.
fn media_error(path: &str) -> impl Fn(StoreError) -> StoreError + '_ {
    move |e| {
        if e.is_blob_store_failure() {
            StoreError::MediaNotStored {
                path: path.to_owned(),
                message: e.to_string(),
            }
        } else {
            e
        }
    }
}

async fn decode_into(
    blobs: &dyn BlobStore,
    b64: &str,
    engine: &GeneralPurpose,
    path: &str,
) -> Result<(BlobRef, Option<&'static str>)> {
    decode_and_store(blobs, b64, engine, path)
        .await
        .map_err(media_error(path))
}

async fn decode_and_store(
    blobs: &dyn BlobStore,
    b64: &str,
    engine: &GeneralPurpose,
    path: &str,
) -> Result<(BlobRef, Option<&'static str>)> {
    let size_hint = toolwire_core::base64_decoded_len(b64);
    if size_hint <= WHOLE_PUT_BYTES {
        // One PUT (after a HEAD that finds a blob already stored) instead of a streamed
        // upload: on S3 a stream is a multipart upload to a temporary key, then a copy
        // and a delete, six requests where two do; and a blob stored before costs no
        // upload at all.
        let bytes = engine.decode(b64).map_err(|e| StoreError::InvalidBase64 {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let sniffed = infer::get(&bytes).map(|t| t.mime_type());
        return Ok((store_bytes(blobs, &bytes).await?, sniffed));
    }
    let mut writer = blobs.writer(Some(size_hint)).await?;
    let mut buf = vec![0u8; SLICE_CHARS / 4 * 3];
    let mut sniffed = None;
    for (n, slice) in b64.as_bytes().chunks(SLICE_CHARS).enumerate() {
        let len = match engine.decode_slice(slice, &mut buf) {
            Ok(len) => len,
            Err(e) => {
                let _ = writer.abort().await;
                return Err(StoreError::InvalidBase64 {
                    path: path.to_owned(),
                    message: e.to_string(),
                });
            }
        };
        let bytes = buf.get(..len).unwrap_or_default();
        if n == 0 {
            sniffed = infer::get(bytes).map(|t| t.mime_type());
        }
        writer.write(bytes).await?;
    }
    Ok((writer.finish().await?, sniffed))
}
