//! Media detection: data URIs and bare base64 in JSON, validated and sniffed from magic bytes,
//! and pulled out of bare JSON as values of their own ([`structured`]).
//!
//! A payload's declared MIME type is a claim; the bytes decide (`infer`). Only a prefix is
//! decoded for sniffing, and validity is checked by a vectorizable scan, so a 20 MB image
//! costs little more than the parse that produced it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value as Json;
use toolwire_core::{MediaKind, Source, Value, mime_essence};

use crate::{Diagnostics, Parts, Path};

/// Strings shorter than this are never taken for bare base64 media: short alphanumeric
/// words decode to garbage that could, by chance, start like a known format.
const MIN_BARE_BASE64: usize = 64;

/// Base64 characters decoded for sniffing: 768 bytes covers every magic number `infer`
/// checks for images, audio, video and documents.
const SNIFF_CHARS: usize = 1024;

pub(crate) use toolwire_core::is_base64;

/// Decodes just enough of `b64` to identify its format.
fn sniff_base64(b64: &str) -> Option<&'static str> {
    let take = b64.len().min(SNIFF_CHARS) / 4 * 4;
    let prefix = b64.get(..take)?;
    let bytes = STANDARD
        .decode(prefix.trim_end_matches('='))
        .ok()
        .or_else(|| {
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(prefix.trim_end_matches('='))
                .ok()
        })?;
    sniff_bytes(&bytes)
}

/// The MIME type the bytes' magic numbers say, if they say one.
pub fn sniff_bytes(bytes: &[u8]) -> Option<&'static str> {
    infer::get(bytes).map(|t| t.mime_type())
}

/// Two names for one format, as `infer` and common payloads spell them.
fn same_format(a: &str, b: &str) -> bool {
    const ALIASES: &[(&str, &str)] = &[
        ("audio/wav", "audio/x-wav"),
        ("audio/wave", "audio/x-wav"),
        ("audio/mp3", "audio/mpeg"),
        ("image/jpg", "image/jpeg"),
        ("audio/x-flac", "audio/flac"),
        ("audio/m4a", "audio/x-m4a"),
        ("application/x-gzip", "application/gzip"),
        ("application/zip", "application/x-zip-compressed"),
    ];
    a == b
        || ALIASES
            .iter()
            .any(|&(x, y)| (a == x && b == y) || (a == y && b == x))
}

/// The outcome of checking inline base64 media.
pub(crate) struct Media {
    pub mime: String,
    /// A note for the diagnostics when the declared type was overruled.
    pub note: Option<String>,
}

/// Settles the MIME type of base64 `data` declared as `declared`. `Err` when the data is
/// not valid base64.
pub(crate) fn check(data: &str, declared: Option<&str>) -> Result<Media, String> {
    if !is_base64(data) {
        return Err("not valid base64".to_owned());
    }
    let sniffed = sniff_base64(data);
    let declared_essence = declared.map(mime_essence);
    Ok(match (sniffed, declared, declared_essence) {
        (Some(s), Some(d), Some(de)) if !same_format(s, &de) => Media {
            mime: s.to_owned(),
            note: Some(format!("declared {d} but the bytes are {s}; using {s}")),
        },
        // A format infer knows, whose magic bytes are absent: the claim is false.
        (None, Some(d), Some(de))
            if de != "application/octet-stream" && infer::is_mime_supported(&de) =>
        {
            Media {
                mime: "application/octet-stream".to_owned(),
                note: Some(format!(
                    "declared {d} but the bytes are not {de}; kept as binary"
                )),
            }
        }
        (_, Some(d), _) => Media {
            mime: d.to_owned(),
            note: None,
        },
        (Some(s), None, _) => Media {
            mime: s.to_owned(),
            note: None,
        },
        (None, None, _) => Media {
            mime: "application/octet-stream".to_owned(),
            note: None,
        },
    })
}

/// An `image` or `file` value for base64 bytes of type `mime`.
pub(crate) fn media_value(base64: String, mime: String, filename: Option<String>) -> Value {
    match MediaKind::from_mime(&mime) {
        None => Value::image(Source::base64(base64), mime),
        Some(_) => Value::file(Source::base64(base64), mime, filename),
    }
}

/// Inline media found in a string: its base64, its settled MIME type, and a note when a
/// data URI's declared type was overruled by the bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Inline<'a> {
    pub base64: &'a str,
    pub mime: String,
    pub note: Option<String>,
}

/// Recognizes a `data:<mime>;base64,<data>` URI or a bare base64 string whose bytes have
/// a known format.
pub(crate) fn detect_inline(s: &str) -> Option<Inline<'_>> {
    if let Some(rest) = s.strip_prefix("data:") {
        let (header, data) = rest.split_once(',')?;
        let mime = header.strip_suffix(";base64")?;
        let declared = (!mime.is_empty()).then_some(mime);
        let media = check(data, declared).ok()?;
        return Some(Inline {
            base64: data,
            mime: media.mime,
            note: media.note,
        });
    }
    if s.len() < MIN_BARE_BASE64 || !is_base64(s) {
        return None;
    }
    sniff_base64(s).map(|mime| Inline {
        base64: s,
        mime: mime.to_owned(),
        note: None,
    })
}

/// Bare JSON: a `structured` value, with any inline media it holds pulled out as values
/// of their own, each replaced in the data by a pointer to it.
pub(crate) fn structured(json: Json, path: &Path<'_>, diags: &mut Diagnostics, parts: &mut Parts) {
    structured_with(Value::structured(json), path, diags, parts);
}

pub(crate) fn structured_with(
    mut value: Value,
    path: &Path<'_>,
    diags: &mut Diagnostics,
    parts: &mut Parts,
) {
    let slot = parts.output.len();
    parts.output.push(Value::structured(Json::Null));
    let mut data = std::mem::take(&mut value.data);
    let mut inside = Inside {
        slot,
        at: String::new(),
    };
    extract_media(&mut data, path, &mut inside, diags, parts);
    value.data = data;
    parts.output[slot] = value;
}

/// Where in a structured value the walk is: the value's index in `output`, and a JSON
/// pointer into it.
struct Inside {
    slot: usize,
    at: String,
}

fn extract_media(
    json: &mut Json,
    path: &Path<'_>,
    inside: &mut Inside,
    diags: &mut Diagnostics,
    parts: &mut Parts,
) {
    match json {
        Json::String(s) => {
            if let Some(Inline { base64, mime, note }) = detect_inline(s) {
                let index = parts.output.len();
                let b64 = base64.to_owned();
                let before = s.get(..s.len() - base64.len()).unwrap_or_default();
                let mut from = serde_json::Map::new();
                from.insert(
                    toolwire_core::INLINE_META.to_owned(),
                    serde_json::json!({"in": inside.slot, "at": inside.at, "before": before}),
                );
                if let Some(note) = note {
                    diags.push(path, note);
                }
                diags.push(path, format!("inline {mime} moved to output[{index}]"));
                *s = format!("[{mime} → output[{index}]]");
                let mut medium = media_value(b64, mime, None);
                medium.meta = Some(from);
                parts.output.push(medium);
            }
        }
        Json::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = inside.at.len();
                inside.at.push('/');
                inside.at.push_str(&i.to_string());
                extract_media(item, &path.index(i), inside, diags, parts);
                inside.at.truncate(len);
            }
        }
        Json::Object(map) => {
            for (key, item) in map.iter_mut() {
                let len = inside.at.len();
                // RFC 6901: `~` and `/` in a key are escaped.
                inside.at.push('/');
                inside
                    .at
                    .push_str(&key.replace('~', "~0").replace('/', "~1"));
                extract_media(item, &path.key(key), inside, diags, parts);
                inside.at.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn base64_validity() {
        assert!(is_base64(PNG_1X1));
        assert!(is_base64("aGk"));
        assert!(!is_base64("aGk=x"));
        assert!(!is_base64("a"));
        assert!(!is_base64(""));
        assert!(!is_base64("aGk!"));
        assert!(!is_base64("aG=k"));
    }

    #[test]
    fn sniffing_overrules_a_false_declaration() {
        let m = check(PNG_1X1, Some("image/jpeg")).unwrap();
        assert_eq!(m.mime, "image/png");
        assert!(m.note.unwrap().contains("declared image/jpeg"));
        assert_eq!(check(PNG_1X1, Some("image/png")).unwrap().note, None);
        assert!(check("%%%", Some("image/png")).is_err());
        let fake = check("aGVsbG8gd29ybGQ=", Some("image/png")).unwrap();
        assert_eq!(fake.mime, "application/octet-stream");
        // SVG has no magic number; the declaration stands.
        assert_eq!(
            check("PHN2Zz48L3N2Zz4=", Some("image/svg+xml"))
                .unwrap()
                .mime,
            "image/svg+xml"
        );
    }

    #[test]
    fn inline_media_detection() {
        let uri = format!("data:image/png;base64,{PNG_1X1}");
        assert_eq!(
            detect_inline(&uri).map(|i| (i.base64, i.mime)),
            Some((PNG_1X1, "image/png".to_owned()))
        );
        // A data URI that lies about its type is corrected, and says so.
        let lying_uri = format!("data:image/jpeg;base64,{PNG_1X1}");
        let lying = detect_inline(&lying_uri).unwrap();
        assert_eq!(lying.mime, "image/png");
        assert!(lying.note.unwrap().contains("declared image/jpeg"));
        assert_eq!(
            detect_inline(PNG_1X1).map(|i| (i.base64, i.mime)),
            Some((PNG_1X1, "image/png".to_owned()))
        );
        // Long valid base64 of plain text is not media.
        assert_eq!(detect_inline(&"QUFB".repeat(40)), None);
        assert_eq!(detect_inline("data:text/plain,hello"), None);
    }
}
