//! Numbers as people read them, shared by every view of a result (terminal, model text).

/// `12345678` → `12,345,678`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `512 B`, `5.3 KB`, `52 MB`: decimal units, as the labels say. The terminal and the
/// model's text both use this one function, so a size reads the same in both.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KB", "MB", "GB", "TB", "PB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = u;
    }
    if value < 10.0 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.0} {unit}")
    }
}

/// At most `max_chars` characters of `text`, cut on a character boundary; a cut says how
/// long the whole was (`abc… (5004 bytes in all)`). For errors that quote input or a
/// server's reply: a 200 MB value must not become a 200 MB message.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}… ({} bytes in all)", &text[..i], text.len()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_every_three_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn excerpts_cut_on_characters_and_say_how_long_the_whole_was() {
        assert_eq!(excerpt("short", 10), "short");
        assert_eq!(excerpt("ééééé", 2), "éé… (10 bytes in all)");
    }

    #[test]
    fn sizes_in_decimal_units() {
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(5300), "5.3 KB");
        assert_eq!(bytes(34_000), "34 KB");
        assert_eq!(bytes(52_428_800), "52 MB");
        assert_eq!(bytes(u64::MAX), "18447 PB");
    }
}
