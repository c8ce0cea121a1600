//! `Out`: the lines of one value's body, cut at its height limit, and line wrapping.
//!
//! Renderers stop producing lines once `Out` is full and report how much they left out,
//! so the cost of rendering follows what is shown, not the size of the input.

use unicode_width::UnicodeWidthChar;

use crate::options::ColorMode;
use crate::style::{Line, Span, Style, line_of};

#[derive(Debug)]
pub(crate) struct Out {
    pub lines: Vec<String>,
    limit: Option<usize>,
    /// Source lines (or entries) left out because the limit was reached.
    more: u64,
    pub mode: ColorMode,
    pub width: usize,
}

/// How a long line is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrap {
    /// Anywhere: for code and plain text, whose whitespace matters.
    Chars,
    /// At spaces, dropping them at line starts: for prose.
    Words,
}

impl Out {
    pub(crate) fn new(mode: ColorMode, width: usize, limit: Option<usize>) -> Self {
        Out {
            lines: Vec::new(),
            limit,
            more: 0,
            mode,
            width,
        }
    }

    pub(crate) fn room(&self) -> bool {
        self.limit.is_none_or(|l| self.lines.len() < l)
    }

    /// Lines that can still be pushed; `None` when unlimited.
    pub(crate) fn remaining(&self) -> Option<usize> {
        self.limit.map(|l| l.saturating_sub(self.lines.len()))
    }

    pub(crate) fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Pushes a finished line; `false` (and the line dropped) when full.
    pub(crate) fn push(&mut self, line: String) -> bool {
        if !self.room() {
            return false;
        }
        self.lines.push(line);
        true
    }

    /// Pushes even past the limit: for notes that explain what follows.
    pub(crate) fn push_always(&mut self, line: String) {
        self.lines.push(line);
    }

    /// Pushes one line of spans, cut to the width.
    pub(crate) fn push_spans(&mut self, spans: &[Span]) -> bool {
        let total: usize = spans.iter().map(|s| str_width(&s.text)).sum();
        let line = if total > self.width {
            line_of(self.mode, &fit(spans.to_vec(), self.width))
        } else {
            line_of(self.mode, spans)
        };
        self.push(line)
    }

    pub(crate) fn add_more(&mut self, n: u64) {
        self.more += n;
    }

    pub(crate) fn more(&self) -> u64 {
        self.more
    }

    /// A dim explanatory line, e.g. why a fallback view is used.
    pub(crate) fn note(&mut self, text: &str) {
        let cut = truncate(&crate::sanitize::inline(text), self.width);
        let mut line = Line::new(self.mode);
        line.push(&cut, Style::dim());
        self.push_always(line.finish());
    }

    /// Wraps `spans` to the width, the first line after `first`, the others after `cont`
    /// (prefixes of the same width keep columns aligned). Returns `false` when the body
    /// filled up before all of it was pushed.
    pub(crate) fn wrapped(
        &mut self,
        first: &[Span],
        cont: &[Span],
        spans: &[Span],
        mode: Wrap,
    ) -> bool {
        let prefix_width = |p: &[Span]| p.iter().map(|s| str_width(&s.text)).sum::<usize>();
        // Prefixes (tree glyphs and keys, gutters) get at most half the line, so the
        // text always has room, even for a double-width character.
        let max_prefix = self.width / 2;
        let cut = |p: &[Span]| {
            if prefix_width(p) > max_prefix {
                fit(p.to_vec(), max_prefix)
            } else {
                p.to_vec()
            }
        };
        let (first, cont) = (cut(first), cut(cont));
        let (first, cont) = (first.as_slice(), cont.as_slice());
        let avail = self
            .width
            .saturating_sub(prefix_width(first).max(prefix_width(cont)))
            .max(1);
        // Each row becomes its line as soon as it is cut, so a 200 MB text is never held
        // as rows and as lines at once.
        let max_rows = self.remaining();
        let mut fitted = true;
        let mut i = 0;
        wrap_each(spans, avail, mode, max_rows, |row| {
            let mut line = Line::new(self.mode);
            for s in if i == 0 { first } else { cont } {
                line.push(&s.text, s.style);
            }
            for s in &row {
                line.push(&s.text, s.style);
            }
            i += 1;
            fitted = self.push(line.finish());
            fitted
        });
        fitted
    }
}

/// Cuts spans to `width` columns, ending the cut one with `…`.
pub(crate) fn fit(spans: Vec<Span>, width: usize) -> Vec<Span> {
    let mut used = 0;
    let mut out = Vec::with_capacity(spans.len());
    for s in spans {
        let w = str_width(&s.text);
        if used + w <= width {
            used += w;
            out.push(s);
            continue;
        }
        let room = width.saturating_sub(used);
        if room > 0 {
            out.push(Span::new(truncate(&s.text, room), s.style));
        }
        break;
    }
    out
}

pub(crate) fn str_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// Cuts `s` to `width` columns, ending in `…` when cut.
pub(crate) fn truncate(s: &str, width: usize) -> String {
    if str_width(s) <= width {
        return s.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Splits styled text into rows of at most `width` columns. With `max_rows`, stops after
/// one row more than that, so a caller can tell the text did not fit.
#[cfg(test)]
pub(crate) fn wrap(
    spans: &[Span],
    width: usize,
    mode: Wrap,
    max_rows: Option<usize>,
) -> Vec<Vec<Span>> {
    let mut rows = Vec::new();
    wrap_each(spans, width, mode, max_rows, |row| {
        rows.push(row);
        true
    });
    rows
}

/// Hands each row to `emit` as soon as it is cut, stopping when `emit` says `false` or
/// after `max_rows` + 1 rows (one more, so a caller can tell the text did not fit).
pub(crate) fn wrap_each(
    spans: &[Span],
    width: usize,
    mode: Wrap,
    max_rows: Option<usize>,
    mut emit: impl FnMut(Vec<Span>) -> bool,
) {
    let width = width.max(1);
    let mut emitted = 0usize;
    // `true` while more rows are wanted.
    let mut push_row = |row: Vec<Span>, emitted: &mut usize| {
        *emitted += 1;
        emit(row) && max_rows.is_none_or(|m| *emitted <= m)
    };
    let mut row: Vec<Span> = Vec::new();
    let mut row_width = 0usize;

    let push_str = |row: &mut Vec<Span>, text: &str, style: Style| match row.last_mut() {
        Some(last) if last.style == style => last.text.push_str(text),
        _ => row.push(Span::new(text, style)),
    };

    match mode {
        Wrap::Chars => {
            for span in spans {
                let mut buf = [0u8; 4];
                for c in span.text.chars() {
                    let cw = c.width().unwrap_or(0);
                    if row_width + cw > width && row_width > 0 {
                        row_width = 0;
                        if !push_row(std::mem::take(&mut row), &mut emitted) {
                            return;
                        }
                    }
                    push_str(&mut row, c.encode_utf8(&mut buf), span.style);
                    row_width += cw;
                }
            }
        }
        Wrap::Words => {
            for word in words(spans) {
                let ww: usize = word.pieces.iter().map(|(t, _)| str_width(t)).sum();
                if word.space {
                    if row_width == 0 && emitted > 0 {
                        continue;
                    }
                    if row_width + ww > width {
                        row_width = 0;
                        if !push_row(std::mem::take(&mut row), &mut emitted) {
                            return;
                        }
                        continue;
                    }
                } else if row_width + ww > width && row_width > 0 {
                    trim_trailing_spaces(&mut row);
                    row_width = 0;
                    if !push_row(std::mem::take(&mut row), &mut emitted) {
                        return;
                    }
                }
                for (text, style) in &word.pieces {
                    if row_width + str_width(text) <= width {
                        push_str(&mut row, text, *style);
                        row_width += str_width(text);
                        continue;
                    }
                    // A word wider than the line: break it anywhere.
                    let mut buf = [0u8; 4];
                    for c in text.chars() {
                        let cw = c.width().unwrap_or(0);
                        if row_width + cw > width && row_width > 0 {
                            row_width = 0;
                            if !push_row(std::mem::take(&mut row), &mut emitted) {
                                return;
                            }
                        }
                        push_str(&mut row, c.encode_utf8(&mut buf), *style);
                        row_width += cw;
                    }
                }
            }
        }
    }
    if !row.is_empty() || emitted == 0 {
        push_row(row, &mut emitted);
    }
}

fn trim_trailing_spaces(row: &mut Vec<Span>) {
    while let Some(last) = row.last_mut() {
        let trimmed = last.text.trim_end_matches(' ').len();
        last.text.truncate(trimmed);
        if last.text.is_empty() {
            row.pop();
        } else {
            break;
        }
    }
}

struct Word<'a> {
    space: bool,
    pieces: Vec<(&'a str, Style)>,
}

/// Runs of spaces and of non-spaces; a word may cross style boundaries (`**bold**,`).
fn words(spans: &[Span]) -> Vec<Word<'_>> {
    let mut out: Vec<Word<'_>> = Vec::new();
    for span in spans {
        let text = span.text.as_str();
        let mut start = 0;
        while start < text.len() {
            let space = text[start..].starts_with(' ');
            let end = text[start..]
                .find(|c: char| (c == ' ') != space)
                .map_or(text.len(), |i| start + i);
            let piece = (&text[start..end], span.style);
            match out.last_mut() {
                Some(w) if w.space == space => w.pieces.push(piece),
                _ => out.push(Word {
                    space,
                    pieces: vec![piece],
                }),
            }
            start = end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &[Vec<Span>]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.text.as_str()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_break_long_words() {
        let spans = [Span::new("the quick brown fox", Style::PLAIN)];
        assert_eq!(
            texts(&wrap(&spans, 10, Wrap::Words, None)),
            ["the quick", "brown fox"]
        );
        let spans = [Span::new("abcdefghijkl xy", Style::PLAIN)];
        assert_eq!(
            texts(&wrap(&spans, 5, Wrap::Words, None)),
            ["abcde", "fghij", "kl xy"]
        );
    }

    #[test]
    fn chars_wrap_keeps_whitespace_and_wide_chars() {
        let spans = [Span::new("  ab  cd", Style::PLAIN)];
        assert_eq!(texts(&wrap(&spans, 4, Wrap::Chars, None)), ["  ab", "  cd"]);
        let spans = [Span::new("日本語", Style::PLAIN)];
        assert_eq!(
            texts(&wrap(&spans, 3, Wrap::Chars, None)),
            ["日", "本", "語"]
        );
        assert_eq!(texts(&wrap(&[], 3, Wrap::Chars, None)), [""]);
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hi", 6), "hi");
    }
}
