//! When to retry and how long to wait.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// Rate limits, request timeouts (408), conflicts a retry resolves (409, as Anthropic
/// documents for overload) and server errors are worth another try; other 4xx are not.
pub(super) fn is_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
}

/// The longest wait a server's header is taken at: a hostile or broken `Retry-After: 1e20`
/// must become a long wait (which the retry policy caps further), never an overflow.
pub(super) const MAX_HEADER_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

/// The server's `retry-after-ms`, or `retry-after` in seconds or as an HTTP date, if any.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

/// [`retry_after`] with the clock given, so a date can be tested.
pub(super) fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    let value = get("retry-after")?;
    match value.parse::<f64>() {
        Ok(secs) => seconds(secs),
        // An HTTP date: the wait is until then; a date in the past means now.
        Err(_) => httpdate::parse_http_date(value).ok().map(|at| {
            at.duration_since(now)
                .unwrap_or(Duration::ZERO)
                .min(MAX_HEADER_WAIT)
        }),
    }
}

/// A non-negative, finite number of seconds as a wait, capped; anything else is ignored.
fn seconds(secs: f64) -> Option<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(
        Duration::try_from_secs_f64(secs)
            .unwrap_or(MAX_HEADER_WAIT)
            .min(MAX_HEADER_WAIT),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_seconds_and_ms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        assert!(is_retryable(429) && is_retryable(503) && !is_retryable(400));
        assert!(is_retryable(408) && is_retryable(409) && !is_retryable(404));
    }

    #[test]
    fn huge_negative_and_junk_values_neither_panic_nor_wait_forever() {
        for (name, value, want) in [
            ("retry-after", "1e20", Some(MAX_HEADER_WAIT)),
            ("retry-after-ms", "1e300", Some(MAX_HEADER_WAIT)),
            ("retry-after", "-1", None),
            ("retry-after", "NaN", None),
            ("retry-after", "inf", None),
            ("retry-after", "soon", None),
        ] {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_static(value));
            assert_eq!(retry_after(&h), want, "{name}: {value}");
        }
    }

    #[test]
    fn an_http_date_is_a_wait_until_then() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:30 GMT"),
        );
        assert_eq!(retry_after_at(&h, now), Some(Duration::from_secs(30)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:27:00 GMT"),
        );
        assert_eq!(retry_after_at(&h, now), Some(Duration::ZERO));
    }
}
