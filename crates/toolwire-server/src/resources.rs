//! `GET /api/resources/{blob}/content`: a stored blob's bytes, with Range, an ETag from its
//! hash and `immutable` caching. Untrusted bytes are never run in the app's origin: no
//! sniffing, a sandbox policy on every response, and anything but passive media is a
//! download.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolwire_store::BlobKey;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Path;

/// The most bytes one response carries; a larger blob is read in ranges.
pub(crate) const MAX_RANGE: u64 = 64 * 1024 * 1024;

/// A `Range: bytes=...` header against a blob of `size` bytes: `None` for the whole blob,
/// `Some(Err)` when it cannot be satisfied (416). One range only; several are answered
/// whole, as RFC 9110 allows.
pub(crate) fn parse_range(value: &str, size: u64) -> Option<Result<std::ops::Range<u64>, ()>> {
    let spec = value.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let (start, end) = (start.trim(), end.trim());
    let range = if start.is_empty() {
        // A suffix: the last N bytes.
        let n: u64 = end.parse().ok()?;
        if n == 0 || size == 0 {
            return Some(Err(()));
        }
        size.saturating_sub(n)..size
    } else {
        let start: u64 = start.parse().ok()?;
        let end = if end.is_empty() {
            size.saturating_sub(1)
        } else {
            end.parse::<u64>().ok()?.min(size.saturating_sub(1))
        };
        if start >= size || end < start {
            return Some(Err(()));
        }
        start..end + 1
    };
    Some(Ok(range))
}

/// The Content-Type of a blob, from its bytes: blobs are content-addressed and carry no
/// type of their own, and a client-given one is never trusted.
fn content_type(head: &[u8]) -> &'static str {
    toolwire_normalize::sniff_bytes(head).unwrap_or_else(|| {
        if std::str::from_utf8(head).is_ok() {
            "text/plain; charset=utf-8"
        } else {
            "application/octet-stream"
        }
    })
}

/// Types a browser only ever displays, never runs: raster images, audio, video and plain
/// text. SVG is an image that runs script, so it is not one.
pub(crate) fn is_passive(mime: &str) -> bool {
    const RASTER: &[&str] = &[
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/avif",
        "image/bmp",
        "image/x-icon",
        "image/vnd.microsoft.icon",
    ];
    let essence = mime.split(';').next().unwrap_or_default().trim();
    // `audio/x+xml` and the like are rendered by Chromium as XML documents.
    let media =
        (essence.starts_with("audio/") || essence.starts_with("video/")) && !essence.contains('+');
    RASTER.contains(&essence) || media || essence == "text/plain"
}

pub(crate) async fn content(
    State(state): State<AppState>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // Parsed before anything is looked up: the key never becomes a path unchecked.
    let key = BlobKey::parse(&key).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let blobs = &state.host.stores().blobs();
    let size = blobs
        .size(&key)
        .await?
        .ok_or_else(|| ApiError::not_found("no such resource"))?;
    let etag = format!("\"{}\"", key.hex());
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes())
    {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_range(v, size));
    let (status, range) = match range {
        Some(Err(())) => {
            return Ok((
                StatusCode::RANGE_NOT_SATISFIABLE,
                [(header::CONTENT_RANGE, format!("bytes */{size}"))],
            )
                .into_response());
        }
        Some(Ok(r)) => (StatusCode::PARTIAL_CONTENT, r),
        None => (StatusCode::OK, 0..size),
    };
    if range.end - range.start > MAX_RANGE {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!(
                "the resource is {size} bytes: ask for at most {MAX_RANGE} at a time with Range"
            ),
        ));
    }
    let head = blobs.get_range(&key, 0..size.min(512)).await?;
    let mime = content_type(&head);
    let bytes = if range.is_empty() {
        Default::default()
    } else {
        blobs.get_range(&key, range.clone()).await?
    };
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=31536000, immutable"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    if status == StatusCode::PARTIAL_CONTENT
        && let Ok(v) =
            HeaderValue::from_str(&format!("bytes {}-{}/{size}", range.start, range.end - 1))
    {
        h.insert(header::CONTENT_RANGE, v);
    }
    // Every response is its own sandboxed, script-less origin if opened as a page; any
    // type that is not plainly passive is also a download, so that no stored byte is ever
    // rendered as an active document on the app's origin, whatever its MIME type claims
    // (an allowlist: `<?xml` sniffed as text/xml ran script when a denylist missed it).
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    if !is_passive(mime) {
        h.insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment"),
        );
    }
    Ok(response)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{content_type, is_passive, parse_range};

    #[test]
    fn only_passive_types_are_shown_inline() {
        for passive in [
            "image/png",
            "audio/mpeg",
            "video/webm",
            "text/plain; charset=utf-8",
        ] {
            assert!(is_passive(passive), "{passive}");
        }
        for active in [
            "image/svg+xml",
            "text/html",
            "text/xml",
            "application/xml",
            "application/xhtml+xml",
            "application/pdf",
            "application/octet-stream",
            "text/javascript",
            "audio/x+xml",
        ] {
            assert!(!is_passive(active), "{active}");
        }
        // An XHTML document is sniffed as something active, not as plain text.
        let xhtml = br#"<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><script>1</script></html>"#;
        assert!(!is_passive(content_type(xhtml)), "{}", content_type(xhtml));
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-99", 1000), Some(Ok(0..100)));
        assert_eq!(parse_range("bytes=900-", 1000), Some(Ok(900..1000)));
        assert_eq!(parse_range("bytes=-100", 1000), Some(Ok(900..1000)));
        assert_eq!(parse_range("bytes=-5000", 1000), Some(Ok(0..1000)));
        assert_eq!(parse_range("bytes=0-5000", 1000), Some(Ok(0..1000)));
        assert_eq!(parse_range("bytes=1000-", 1000), Some(Err(())));
        assert_eq!(parse_range("bytes=5-2", 1000), Some(Err(())));
        assert_eq!(parse_range("bytes=-0", 1000), Some(Err(())));
        assert_eq!(parse_range("bytes=0-1,5-6", 1000), None);
        assert_eq!(parse_range("items=0-1", 1000), None);
        assert_eq!(parse_range("bytes=x-1", 1000), None);
    }
}
