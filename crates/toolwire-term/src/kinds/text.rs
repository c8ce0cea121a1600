//! Plain text and code: line by line, whitespace kept, optionally highlighted and numbered.

use syntect::parsing::SyntaxReference;

use crate::highlight::Highlighter;
use crate::out::{Out, Wrap};
use crate::style::{Span, Style};

/// Lines in `s`, counting a last line without `\n`. Runs at memchr speed, so counting
/// what was not shown costs far less than showing it.
pub(crate) fn count_lines(s: &str) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', s.as_bytes()).count() as u64;
    newlines + u64::from(!s.is_empty() && !s.ends_with('\n'))
}

/// `s` cut to at most `max` bytes, at a char boundary.
fn cap(s: &str, max: Option<usize>) -> &str {
    match max {
        Some(max) if s.len() > max => {
            let mut end = max;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            &s[..end]
        }
        _ => s,
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct TextStyle {
    pub syntax: Option<&'static SyntaxReference>,
    pub line_numbers: bool,
    pub base: Style,
}

impl TextStyle {
    pub const PLAIN: TextStyle = TextStyle {
        syntax: None,
        line_numbers: false,
        base: Style::PLAIN,
    };
}

/// Renders `text` into `out`, stopping when it is full and counting the rest.
pub(crate) fn render(out: &mut Out, text: &str, style: TextStyle) {
    if text.is_empty() {
        out.note("(empty)");
        return;
    }
    let gutter_digits = if style.line_numbers {
        // Only the lines that can be shown decide the gutter: counting all of a 50 MB
        // file here would cost more than the rendering.
        let shown = match out.remaining() {
            Some(r) => count_lines_upto(text, r),
            None => count_lines(text),
        };
        shown.max(1).to_string().len()
    } else {
        0
    };
    let mut hl = Highlighter::new(style.syntax, out.mode, style.base);
    let mut rest = text;
    let mut number = 0u64;
    while !rest.is_empty() {
        if !out.room() {
            out.add_more(count_lines(rest));
            return;
        }
        let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        number += 1;
        // A single huge line is cut to what the remaining rows could hold.
        let max_bytes = out
            .remaining()
            .map(|r| r.saturating_mul(out.width).saturating_mul(4) + 4);
        let spans = hl.line(cap(line, max_bytes));
        let (first, cont) = if style.line_numbers {
            (
                vec![Span::new(
                    format!("{number:>gutter_digits$} │ "),
                    Style::dim(),
                )],
                vec![Span::new(
                    format!("{:>gutter_digits$} │ ", ""),
                    Style::dim(),
                )],
            )
        } else {
            (Vec::new(), Vec::new())
        };
        if !out.wrapped(&first, &cont, &spans, Wrap::Chars) {
            out.add_more(1 + count_lines(next));
            return;
        }
        rest = next;
    }
}

/// Lines in `s`, counting at most `limit` of them.
fn count_lines_upto(s: &str, limit: usize) -> u64 {
    let mut n = 0u64;
    let mut rest = s.as_bytes();
    while !rest.is_empty() && (n as usize) < limit {
        n += 1;
        match memchr::memchr(b'\n', rest) {
            Some(i) => rest = &rest[i + 1..],
            None => break,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ColorMode;

    #[test]
    fn counts_lines_with_and_without_final_newline() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines_upto("a\nb\nc\n", 2), 2);
    }

    #[test]
    fn cut_text_reports_what_was_left_out() {
        let mut out = Out::new(ColorMode::Off, 20, Some(2));
        render(&mut out, "one\ntwo\nthree\nfour\n", TextStyle::PLAIN);
        assert_eq!(out.lines, ["one", "two"]);
        assert_eq!(out.more(), 2);
    }

    #[test]
    fn a_huge_single_line_is_cut_not_copied() {
        let line = "x".repeat(10_000_000);
        let mut out = Out::new(ColorMode::Off, 10, Some(3));
        render(&mut out, &line, TextStyle::PLAIN);
        assert_eq!(out.lines.len(), 3);
        assert_eq!(out.more(), 1);
    }
}
