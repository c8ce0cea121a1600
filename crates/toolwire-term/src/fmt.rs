//! Human-readable numbers: byte sizes, counts, durations, dates.

/// `5.3 KB`: the one byte-size format, shared with the model's text.
pub(crate) fn size(bytes: u64) -> String {
    toolwire_core::humanize::bytes(bytes)
}

/// `1,234,567`.
pub(crate) fn count(n: u64) -> String {
    toolwire_core::humanize::thousands(n)
}

/// `1 line`, `2 lines`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// `… 5 more lines`.
pub(crate) fn more(n: u64, one: &str, many: &str) -> String {
    format!("… {} more {}", count(n), if n == 1 { one } else { many })
}

/// `850 ms`, `2.3 s`, `4 m 05 s`.
pub(crate) fn duration_ms(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} m {:02} s", ms / 60_000, (ms / 1000) % 60),
    }
}

/// `2024-05-01 12:00` from an RFC 3339 timestamp; anything else as given.
pub(crate) fn date(s: &str) -> &str {
    let b = s.as_bytes();
    let looks_rfc3339 = b.len() >= 16
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && s.is_char_boundary(16);
    if looks_rfc3339 { &s[..16] } else { s }
}

/// [`date`] with the `T` separator shown as a space.
pub(crate) fn date_display(s: &str) -> String {
    let d = date(s);
    if d.len() == 16 && d.is_char_boundary(10) && d.is_char_boundary(11) {
        format!("{} {}", &d[..10], &d[11..])
    } else {
        d.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humans_read_these() {
        assert_eq!(size(999), "999 B");
        assert_eq!(size(5300), "5.3 KB");
        assert_eq!(size(52_428_800), "52 MB");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(duration_ms(12), "12 ms");
        assert_eq!(duration_ms(2345), "2.3 s");
        assert_eq!(duration_ms(125_000), "2 m 05 s");
        assert_eq!(date_display("2024-05-01T12:34:56Z"), "2024-05-01 12:34");
        assert_eq!(date_display("yesterday"), "yesterday");
    }
}
