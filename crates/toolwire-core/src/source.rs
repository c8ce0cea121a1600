//! Where media bytes live: inline base64, a content-addressed blob, or a URL.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The bytes of an image or file. Exactly one of the three forms; `normalize` produces
/// `Base64`, `persist` turns large ones into `Blob`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Source {
    /// The bytes inline, base64-encoded.
    Base64 {
        /// Standard-alphabet base64, padding optional.
        base64: String,
    },
    /// The bytes in the blob store, by content hash.
    Blob {
        /// `blake3:` followed by 64 lowercase hex characters.
        #[schemars(regex(pattern = r"^blake3:[0-9a-f]{64}$"))]
        blob: String,
        /// The decoded size in bytes.
        size: u64,
    },
    /// The bytes at a URL, fetched by whoever needs them.
    Url {
        /// An `http(s):` or `data:` URL.
        url: String,
    },
}

impl Source {
    /// Inline bytes from their base64 text.
    pub fn base64(data: impl Into<String>) -> Self {
        Source::Base64 {
            base64: data.into(),
        }
    }

    /// Bytes to be fetched from `url`.
    pub fn url(url: impl Into<String>) -> Self {
        Source::Url { url: url.into() }
    }

    /// Bytes stored as blob `key` (`blake3:<hex>`) of `size` bytes.
    pub fn blob(key: impl Into<String>, size: u64) -> Self {
        Source::Blob {
            blob: key.into(),
            size,
        }
    }

    /// The wire JSON, moving the strings (a 20 MB base64 is not copied).
    pub fn into_json(self) -> serde_json::Value {
        use serde_json::Value as Json;
        let fields: Vec<(&str, Json)> = match self {
            Source::Base64 { base64 } => vec![("base64", Json::String(base64))],
            Source::Blob { blob, size } => {
                vec![("blob", Json::String(blob)), ("size", Json::from(size))]
            }
            Source::Url { url } => vec![("url", Json::String(url))],
        };
        Json::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    /// Size in bytes when known without decoding: exact for blobs, computed for base64.
    pub fn byte_len(&self) -> Option<u64> {
        match self {
            Source::Base64 { base64 } => Some(base64_decoded_len(base64)),
            Source::Blob { size, .. } => Some(*size),
            Source::Url { .. } => None,
        }
    }
}

/// Decoded length of a padded or unpadded base64 string, without decoding it.
pub fn base64_decoded_len(b64: &str) -> u64 {
    let trimmed = b64.trim_end_matches('=');
    (trimmed.len() as u64 * 3) / 4
}

/// Whether `s` is standard base64 (`A–Z a–z 0–9 + /`, optional `=` padding).
pub fn is_base64(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let body = match bytes {
        [rest @ .., b'=', b'='] | [rest @ .., b'='] => {
            if !bytes.len().is_multiple_of(4) {
                return false;
            }
            rest
        }
        _ => {
            if bytes.len() % 4 == 1 {
                return false;
            }
            bytes
        }
    };
    // Branch-free over each chunk so LLVM vectorizes the range checks.
    body.chunks(256).all(|chunk| {
        chunk.iter().fold(true, |ok, &b| {
            ok & (b.is_ascii_alphanumeric() | (b == b'+') | (b == b'/'))
        })
    })
}

/// Whether `key` is a well-formed blob key: `blake3:` plus 64 lowercase hex characters.
pub fn is_blob_key(key: &str) -> bool {
    key.strip_prefix("blake3:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Hand-written so a malformed source gets one clear message instead of serde's
/// "did not match any variant of untagged enum", and so a large base64 string is moved,
/// not buffered and copied.
impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SourceVisitor)
    }
}

struct SourceVisitor;

const SOURCE_SHAPE: &str = "a source: exactly one of {base64}, {blob, size} or {url}";

impl<'de> Visitor<'de> for SourceVisitor {
    type Value = Source;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(SOURCE_SHAPE)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Source, A::Error> {
        let (mut base64, mut blob, mut size, mut url) = (None, None, None, None);
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "base64" => base64 = Some(map.next_value::<String>()?),
                "blob" => blob = Some(map.next_value::<String>()?),
                "size" => size = Some(map.next_value::<u64>()?),
                "url" => url = Some(map.next_value::<String>()?),
                other => {
                    return Err(de::Error::custom(format_args!(
                        "unknown field `{other}` in source; expected {SOURCE_SHAPE}"
                    )));
                }
            }
        }
        match (base64, blob, size, url) {
            (Some(base64), None, None, None) => Ok(Source::Base64 { base64 }),
            (None, Some(blob), Some(size), None) => Ok(Source::Blob { blob, size }),
            (None, Some(_), None, None) => Err(de::Error::custom("blob source needs `size`")),
            (None, None, None, Some(url)) => Ok(Source::Url { url }),
            _ => Err(de::Error::custom(format_args!("expected {SOURCE_SHAPE}"))),
        }
    }
}

/// What an audio, video, document or other binary `file` value holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    /// Audio (`audio/*`).
    Audio,
    /// Video (`video/*`).
    Video,
    /// A document: text, PDF, word processing formats.
    Document,
    /// Anything else.
    Binary,
}

impl MediaKind {
    /// The media kind a MIME type implies; `None` for images, which are their own kind.
    pub fn from_mime(mime: &str) -> Option<MediaKind> {
        let essence = mime_essence(mime);
        if essence.starts_with("image/") {
            None
        } else if essence.starts_with("audio/") {
            Some(MediaKind::Audio)
        } else if essence.starts_with("video/") {
            Some(MediaKind::Video)
        } else if essence.starts_with("text/")
            || matches!(
                essence.as_str(),
                "application/pdf"
                    | "application/msword"
                    | "application/rtf"
                    | "application/epub+zip"
                    | "application/vnd.oasis.opendocument.text"
            )
            || essence.starts_with("application/vnd.openxmlformats-officedocument")
        {
            Some(MediaKind::Document)
        } else {
            Some(MediaKind::Binary)
        }
    }
}

/// The lowercase `type/subtype` of a MIME type, without parameters.
pub fn mime_essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_forms_parse_and_bad_ones_say_why() {
        let s: Source = serde_json::from_str(r#"{"base64":"aGk="}"#).unwrap();
        assert_eq!(s, Source::base64("aGk="));
        let s: Source = serde_json::from_str(r#"{"url":"https://x/y.png"}"#).unwrap();
        assert_eq!(s, Source::url("https://x/y.png"));
        let key = format!("blake3:{}", "a".repeat(64));
        let s: Source = serde_json::from_str(&format!(r#"{{"blob":"{key}","size":3}}"#)).unwrap();
        assert_eq!(s, Source::blob(key, 3));

        let err = serde_json::from_str::<Source>(r#"{"base64":"x","url":"y"}"#).unwrap_err();
        assert!(err.to_string().contains("exactly one of"), "{err}");
        let err = serde_json::from_str::<Source>(r#"{"path":"/etc"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `path`"), "{err}");
    }

    #[test]
    fn blob_keys() {
        assert!(is_blob_key(&format!("blake3:{}", "0f".repeat(32))));
        assert!(!is_blob_key("blake3:abc"));
        assert!(!is_blob_key(&format!("blake3:{}", "0F".repeat(32))));
        assert!(!is_blob_key(&format!("sha256:{}", "0f".repeat(32))));
        assert!(!is_blob_key(&format!("blake3:../{}", "0f".repeat(31))));
    }

    #[test]
    fn decoded_len() {
        assert_eq!(base64_decoded_len("aGk="), 2);
        assert_eq!(base64_decoded_len("aGVsbG8="), 5);
        assert_eq!(base64_decoded_len("aGVsbG8h"), 6);
    }

    #[test]
    fn media_kind_from_mime() {
        assert_eq!(MediaKind::from_mime("audio/wav"), Some(MediaKind::Audio));
        assert_eq!(MediaKind::from_mime("Video/MP4"), Some(MediaKind::Video));
        assert_eq!(
            MediaKind::from_mime("application/pdf"),
            Some(MediaKind::Document)
        );
        assert_eq!(
            MediaKind::from_mime("application/gzip"),
            Some(MediaKind::Binary)
        );
        assert_eq!(MediaKind::from_mime("image/png"), None);
    }
}
