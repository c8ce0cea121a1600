//! Neutralizes control characters in tool-supplied text before it reaches a terminal.
//!
//! Tool output is untrusted: `ESC ] 52 ;` writes the clipboard, `ESC [ 2 J` clears the
//! screen, bidi overrides reorder what the person reads. Every control character is
//! replaced by a visible stand-in (`␛` for ESC), so the person still sees that it was there.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

use crate::options::ColorMode;

/// Columns per tab stop when tabs are expanded.
pub(crate) const TAB_WIDTH: usize = 4;

/// The stand-in for a zero-width character.
pub(crate) const ZERO_WIDTH: char = '\u{25cc}';

/// The visible stand-in for a character that must not reach the terminal raw, if any.
fn stand_in(c: char) -> Option<char> {
    match c {
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32),
        '\u{7f}' => Some('\u{2421}'),
        // C1 controls: U+009B is a one-character CSI on some terminals.
        '\u{80}'..='\u{9f}' => Some('\u{fffd}'),
        // Bidi embeddings, overrides and isolates ("trojan source").
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            Some('\u{fffd}')
        }
        // Zero-width characters that hide or split what the person reads: zero-width
        // space, joiners, word joiner, invisible operators, BOM. Each shows as a dotted
        // circle, Unicode's placeholder for a character with no glyph of its own: it marks
        // where one was, as `␛` marks an ESC, where `�` would read as text that failed to
        // decode.
        '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' => Some(ZERO_WIDTH),
        // Line and paragraph separators break lines where the text shows none.
        '\u{2028}' | '\u{2029}' => Some('\u{fffd}'),
        _ => None,
    }
}

/// Whether `s` might hold something to replace, by a byte scan that is cheap on clean text.
/// With `lines_ok`, newlines and tabs count as clean.
fn may_need_cleaning(s: &str, lines_ok: bool) -> bool {
    s.bytes().any(|b| {
        (b < 0x20 && !(lines_ok && (b == b'\n' || b == b'\t')))
            || b == 0x7f
            || b == 0xc2
            || b == 0xe2
            || b == 0xd8
            || b == 0xef
    })
}

/// For text shown on one line (headers, cells, tree values): newlines become `↵`, tabs a
/// space, other controls their stand-in.
pub(crate) fn inline(s: &str) -> Cow<'_, str> {
    if !may_need_cleaning(s, false) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push('↵'),
            '\t' => out.push(' '),
            '\r' => {}
            c => out.push(stand_in(c).unwrap_or(c)),
        }
    }
    Cow::Owned(out)
}

/// For one line of multi-line text (no `\n`): tabs expand to the next stop counted from
/// column `start_col`; a trailing `\r` (CRLF) is dropped, any other becomes `␍`.
pub(crate) fn line(s: &str, start_col: usize) -> Cow<'_, str> {
    let s = s.strip_suffix('\r').unwrap_or(s);
    if !may_need_cleaning(s, false) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut col = start_col;
    for c in s.chars() {
        if c == '\t' {
            let n = TAB_WIDTH - col % TAB_WIDTH;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
            continue;
        }
        let c = stand_in(c).unwrap_or(c);
        col += c.width().unwrap_or(0);
        out.push(c);
    }
    Cow::Owned(out)
}

/// For text a trusted widget renderer produced, which may style untrusted data: keeps
/// well-formed SGR sequences (`ESC [ digits ; … m`) when colour is on, drops them when
/// off, and neutralizes every other control. Newlines are kept.
pub(crate) fn keep_sgr(s: &str, mode: ColorMode) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find('\x1b') {
        push_clean_lines(&mut out, &rest[..pos]);
        let after = &rest[pos + 1..];
        let sgr_len = after.strip_prefix('[').and_then(|body| {
            let end = body.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
            (body.as_bytes().get(end) == Some(&b'm')).then_some(end + 2)
        });
        match sgr_len {
            Some(n) => {
                if mode != ColorMode::Off {
                    out.push('\x1b');
                    out.push_str(&after[..n]);
                }
                rest = &after[n..];
            }
            None => {
                out.push('\u{241b}');
                rest = after;
            }
        }
    }
    push_clean_lines(&mut out, rest);
    out
}

/// For untrusted multi-line text printed as it is (a model's reply, a stored message, an
/// error that quotes input): newlines and tabs are kept, a CR before a newline dropped,
/// every other control and invisible character replaced by its visible stand-in.
pub fn text(s: &str) -> Cow<'_, str> {
    if !may_need_cleaning(s, true) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => {}
            c => out.push(stand_in(c).unwrap_or(c)),
        }
    }
    Cow::Owned(out)
}

/// For serialized JSON printed to a terminal: serde escapes C0 controls but not DEL, C1
/// controls, bidi overrides or invisible characters. Those can only sit inside strings,
/// so writing them as `\uXXXX` escapes keeps the document valid and its data exact
/// (unlike a stand-in) while nothing raw reaches the terminal.
pub fn json(s: &str) -> Cow<'_, str> {
    if !may_need_cleaning(s, true) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' | '\t' | '\r' | ' '..='~' => out.push(c),
            c if stand_in(c).is_some() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn push_clean_lines(out: &mut String, s: &str) {
    for (i, part) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&line(part, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_visible() {
        assert_eq!(inline("a\x1b]52;c;x\x07b"), "a␛]52;c;x␇b");
        assert_eq!(inline("\x1b[2J"), "␛[2J");
        assert_eq!(inline("x\u{9b}31m"), "x\u{fffd}31m");
        assert_eq!(inline("a\u{202e}b"), "a\u{fffd}b");
        assert!(matches!(inline("plain é ü 日本"), Cow::Borrowed(_)));
    }

    #[test]
    fn text_keeps_lines_and_shows_what_hides() {
        assert_eq!(text("a\r\nb\tc"), "a\nb\tc");
        assert_eq!(text("x\x1b[2Jy\rz"), "x␛[2Jy␍z");
        assert_eq!(text("a\u{200b}b\u{feff}c\u{2028}d"), "a◌b◌c\u{fffd}d");
        // Every zero-width character alike, in every form of text, and never `�`.
        for zw in [
            '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{2062}', '\u{feff}',
        ] {
            let s = format!("a{zw}b");
            assert_eq!(inline(&s), "a◌b");
            assert_eq!(line(&s, 0), "a◌b");
            assert_eq!(keep_sgr(&s, ColorMode::Off), "a◌b");
        }
        assert!(matches!(text("plain é ü 日本\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_escapes_what_serde_leaves_raw() {
        let doc = serde_json::to_string(&"a\u{1b}b\u{202e}c\u{9b}d").unwrap_or_default();
        let clean = json(&doc);
        assert_eq!(clean, r#""a\u001bb\u202ec\u009bd""#);
        let back: String = serde_json::from_str(&clean).unwrap_or_default();
        assert_eq!(back, "a\u{1b}b\u{202e}c\u{9b}d");
    }

    #[test]
    fn tabs_expand_to_stops() {
        assert_eq!(line("a\tb", 0), "a   b");
        assert_eq!(line("\tb\r", 0), "    b");
        assert_eq!(line("a\rb", 0), "a␍b");
    }

    #[test]
    fn widget_output_keeps_only_sgr() {
        let s = "\x1b[1;31mred\x1b[0m \x1b]52;c;eA==\x07 \x1b[2J";
        assert_eq!(
            keep_sgr(s, ColorMode::Ansi256),
            "\x1b[1;31mred\x1b[0m ␛]52;c;eA==␇ ␛[2J"
        );
        assert_eq!(keep_sgr(s, ColorMode::Off), "red ␛]52;c;eA==␇ ␛[2J");
    }
}
