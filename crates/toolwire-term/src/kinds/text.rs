//! Plain text and code: line by line, whitespace kept, optionally highlighted and numbered.

use syntect::parsing::SyntaxReference;

use crate::fmt;
use crate::highlight::Highlighter;
use crate::out::{Out, Wrap, str_width};
use crate::style::{Span, Style};

/// What a person runs to see a cut or collapsed value in full (here, where long text is
/// cut, and used by every other cut).
pub(crate) const EXPAND_HINT: &str = "toolwire show --expand";

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
    pub(crate) const PLAIN: TextStyle = TextStyle {
        syntax: None,
        line_numbers: false,
        base: Style::PLAIN,
    };
}

/// Renders `text` into `out`. When it does not fit, its head and its tail are shown with
/// a line between them saying how many lines were left out and how to see them all: the
/// error on the last line of a long log is what a person looks for.
pub(crate) fn render(out: &mut Out, text: &str, style: TextStyle) {
    if text.is_empty() {
        out.note("(empty)");
        return;
    }
    let Some(room) = out.remaining() else {
        let digits = gutter_digits(style, count_lines(text));
        lines(out, text, 1, digits, style);
        return;
    };
    // Most texts fit: drawn once, from the top. One with more lines than rows cannot, and
    // drawing its rows first would be thrown away (each a line highlighted).
    let first_lines = count_lines_upto(text, room.saturating_add(1));
    if first_lines <= room as u64 {
        let mut whole = Out::new(out.mode, out.width, Some(room));
        let digits = gutter_digits(style, first_lines);
        if lines(&mut whole, text, 1, digits, style).is_none() {
            out.lines.append(&mut whole.lines);
            return;
        }
    }
    // The lines are counted once, however long the text (a 50 MB file is ~700,000).
    let total = count_lines(text);
    // Head and tail, with the line saying what was left out between them (past the
    // height, as the count of a cut value is); too few rows for that: the head.
    if room < 2 {
        head_only(out, text, total, room, style);
        return;
    }
    let digits = gutter_digits(style, total);
    let tail_rows = room / 2;
    let head_rows = room - tail_rows;
    let mut head = Out::new(out.mode, out.width, Some(head_rows));
    let head_lines = lines(&mut head, text, 1, digits, style).unwrap_or(total);
    let tail = tail(out, text, total, head_lines, tail_rows, digits, style);
    let left_out = total.saturating_sub(head_lines + tail.1);
    if tail.1 == 0 {
        // Not one whole line of the tail fits (a huge last line): the head alone.
        head_only(out, text, total, room, style);
        return;
    }
    out.lines.append(&mut head.lines);
    if left_out == 0 {
        out.lines.extend(tail.0);
        return;
    }
    // The longest way to say it that fits the width.
    let n = fmt::plural(left_out, "line", "lines");
    let notes = [
        format!("⋯ {n} left out ({EXPAND_HINT}) ⋯"),
        format!("⋯ {n} left out (--expand) ⋯"),
        format!("⋯ {n} left out ⋯"),
    ];
    let fits = notes.iter().find(|t| str_width(t) <= out.width);
    out.note(fits.unwrap_or(&notes[2]));
    out.lines.extend(tail.0);
}

/// The first `room` rows of `text`, and the count of the lines past them; `total` is
/// `text`'s count of lines.
fn head_only(out: &mut Out, text: &str, total: u64, room: usize, style: TextStyle) {
    let mut whole = Out::new(out.mode, out.width, Some(room));
    let digits = gutter_digits(style, count_lines_upto(text, room));
    let drawn = lines(&mut whole, text, 1, digits, style).unwrap_or(total);
    out.lines.append(&mut whole.lines);
    out.add_more(total.saturating_sub(drawn));
}

/// The gutter's width for line numbers up to `last`.
fn gutter_digits(style: TextStyle, last: u64) -> usize {
    if style.line_numbers {
        last.max(1).to_string().len()
    } else {
        0
    }
}

/// The rows of the last whole lines of `text` that fit in `rows` rows, never reaching back
/// to the first `skip` lines, and how many lines they are. Only the lines shown are drawn.
fn tail(
    out: &Out,
    text: &str,
    total: u64,
    skip: u64,
    rows: usize,
    digits: usize,
    style: TextStyle,
) -> (Vec<String>, u64) {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let bytes = body.as_bytes();
    // Walk back line by line, counting the rows each takes (drawn without colour: the
    // rows are the same), until the next would not fit.
    let (mut from, mut end) = (body.len(), body.len());
    let mut taken = 0u64;
    let mut used = 0usize;
    while taken + skip < total {
        let begin = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |i| i + 1);
        let line = &body[begin..end];
        let n = if line.is_empty() {
            1
        } else {
            let mut probe = Out::new(out.mode, out.width, Some(rows - used));
            let plain = TextStyle {
                syntax: None,
                ..style
            };
            if lines(&mut probe, line, total - taken, digits, plain).is_some() {
                break;
            }
            probe.lines.len()
        };
        if used + n > rows {
            break;
        }
        used += n;
        taken += 1;
        from = begin;
        if begin == 0 {
            break;
        }
        end = begin - 1;
    }
    if taken == 0 {
        return (Vec::new(), 0);
    }
    // The highlighter starts afresh at the tail's first line.
    let mut drawn = Out::new(out.mode, out.width, Some(rows));
    lines(&mut drawn, &body[from..], total - taken + 1, digits, style);
    (drawn.lines, taken)
}

/// Draws the lines of `text` numbered from `first`, until `out` is full; `None` when all
/// were drawn whole, else how many were (a line cut mid-wrap is not). What was left out is
/// the caller's to count: counting it here went over a long text's rest each time.
fn lines(out: &mut Out, text: &str, first: u64, digits: usize, style: TextStyle) -> Option<u64> {
    let mut hl = Highlighter::new(style.syntax, out.mode, style.base);
    let mut rest = text;
    let mut number = first - 1;
    while !rest.is_empty() {
        if !out.room() {
            return Some(number + 1 - first);
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
        let (head, cont) = if style.line_numbers {
            (
                vec![Span::new(format!("{number:>digits$} │ "), Style::dim())],
                vec![Span::new(format!("{:>digits$} │ ", ""), Style::dim())],
            )
        } else {
            (Vec::new(), Vec::new())
        };
        if !out.wrapped(&head, &cont, &spans, Wrap::Chars) {
            return Some(number - first);
        }
        rest = next;
    }
    None
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
        // One row has no room for a tail: the head, and the count of the rest.
        let mut out = Out::new(ColorMode::Off, 20, Some(1));
        render(&mut out, "one\ntwo\nthree\nfour\n", TextStyle::PLAIN);
        assert_eq!(out.lines, ["one"]);
        assert_eq!(out.more(), 3);
        // Two rows: the first line, the last, and what is between them.
        let mut out = Out::new(ColorMode::Off, 20, Some(2));
        render(&mut out, "one\ntwo\nthree\nfour\n", TextStyle::PLAIN);
        assert_eq!(out.lines, ["one", "⋯ 2 lines left out ⋯", "four"]);
        assert_eq!(out.more(), 0);
    }

    /// The end of a long log is shown: the error on its last line is what matters.
    #[test]
    fn long_text_keeps_its_head_and_its_tail() {
        let mut log: String = (1..20_000).map(|i| format!("line {i}\n")).collect();
        log.push_str("ERROR: disk full\n");
        let mut out = Out::new(ColorMode::Off, 60, Some(20));
        render(&mut out, &log, TextStyle::PLAIN);
        assert_eq!(out.lines.len(), 21, "{:#?}", out.lines);
        assert_eq!(out.lines[0], "line 1");
        assert_eq!(out.lines[9], "line 10");
        assert_eq!(
            out.lines[10],
            format!("⋯ 19,980 lines left out ({EXPAND_HINT}) ⋯")
        );
        assert_eq!(out.lines[11], "line 19991");
        assert_eq!(out.lines[20], "ERROR: disk full");
        // Told in the middle, not again at the end.
        assert_eq!(out.more(), 0);

        // Numbered lines keep their numbers in the tail, in a gutter wide enough for them.
        let numbered = TextStyle {
            line_numbers: true,
            ..TextStyle::PLAIN
        };
        let mut out = Out::new(ColorMode::Off, 60, Some(7));
        render(&mut out, &log, numbered);
        assert_eq!(out.lines[0], "    1 │ line 1");
        assert_eq!(out.lines[7], "20000 │ ERROR: disk full");
        assert!(
            out.lines[4].contains("19,993 lines left out"),
            "{:#?}",
            out.lines
        );
    }

    /// A tail line that wraps takes its rows; the tail holds only whole lines.
    #[test]
    fn a_wrapped_tail_line_is_whole() {
        let text = format!("a\nb\nc\nd\ne\nf\n{}\n", "x".repeat(25));
        let mut out = Out::new(ColorMode::Off, 10, Some(7));
        render(&mut out, &text, TextStyle::PLAIN);
        assert_eq!(
            out.lines,
            [
                "a",
                "b",
                "c",
                "d",
                "⋯ 2 lines…",
                "xxxxxxxxxx",
                "xxxxxxxxxx",
                "xxxxx"
            ]
        );
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
