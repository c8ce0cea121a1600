//! Diffs: hunks from the tool or computed with `similar`, shown unified (coloured, with
//! line numbers) or side by side when the terminal is wide enough.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};
use toolwire_core::view::HunkView;

use crate::fmt;
use crate::out::{Out, Wrap, str_width, truncate};
use crate::sanitize;
use crate::style::{CYAN, GREEN, Line, RED, Span, Style};

/// Widths from which old and new are shown next to each other.
pub(crate) const SIDE_BY_SIDE_MIN_WIDTH: usize = 120;
/// Context lines around each change, as `diff -u`.
const CONTEXT: usize = 3;
/// A pathological diff is approximated rather than allowed to hang rendering.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Context,
    Add,
    Del,
    /// `\ No newline at end of file`.
    Note,
}

#[derive(Debug, Clone)]
struct DLine<'a> {
    tag: Tag,
    text: &'a str,
    old: Option<u64>,
    new: Option<u64>,
}

#[derive(Debug, Clone)]
struct Hunk<'a> {
    header: String,
    lines: Vec<DLine<'a>>,
}

/// What a diff renderer needs, from a `diff` value or a generic view.
#[derive(Debug, Clone)]
pub(crate) struct DiffInput<'a> {
    pub original: Option<&'a str>,
    pub modified: &'a str,
    pub hunks: Option<&'a [HunkView<'a>]>,
}

/// A computed diff with its `+N −M` counts.
#[derive(Debug)]
pub(crate) struct Diff<'a> {
    hunks: Vec<Hunk<'a>>,
    pub added: u64,
    pub removed: u64,
}

impl<'a> Diff<'a> {
    pub(crate) fn new(input: &DiffInput<'a>) -> Self {
        let hunks = match (input.hunks, input.original) {
            (Some(hunks), _) => hunks.iter().map(from_view).collect(),
            (None, None) => vec![all_added(input.modified)],
            (None, Some(original)) => compute(original, input.modified),
        };
        let (mut added, mut removed) = (0, 0);
        for l in hunks.iter().flat_map(|h| &h.lines) {
            match l.tag {
                Tag::Add => added += 1,
                Tag::Del => removed += 1,
                _ => {}
            }
        }
        Diff {
            hunks,
            added,
            removed,
        }
    }

    /// `+15 −3`.
    pub(crate) fn stat(&self) -> String {
        format!("+{} −{}", fmt::count(self.added), fmt::count(self.removed))
    }

    fn line_count(&self) -> u64 {
        self.hunks.iter().map(|h| 1 + h.lines.len() as u64).sum()
    }
}

fn from_view<'a>(h: &HunkView<'a>) -> Hunk<'a> {
    let (mut old, mut new) = (h.old_start, h.new_start);
    let lines = h
        .lines
        .iter()
        .map(|raw| {
            let (tag, text) = match raw.chars().next() {
                Some('+') => (Tag::Add, &raw[1..]),
                Some('-') => (Tag::Del, &raw[1..]),
                Some('\\') => (Tag::Note, *raw),
                Some(' ') => (Tag::Context, &raw[1..]),
                _ => (Tag::Context, *raw),
            };
            let (o, n) = match tag {
                Tag::Add => (None, Some(new)),
                Tag::Del => (Some(old), None),
                Tag::Context => (Some(old), Some(new)),
                Tag::Note => (None, None),
            };
            old += u64::from(o.is_some());
            new += u64::from(n.is_some());
            DLine {
                tag,
                text,
                old: o,
                new: n,
            }
        })
        .collect();
    Hunk {
        header: format!(
            "@@ -{},{} +{},{} @@",
            h.old_start, h.old_lines, h.new_start, h.new_lines
        ),
        lines,
    }
}

fn split_lines(s: &str) -> impl Iterator<Item = &str> {
    s.split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
}

fn all_added(modified: &str) -> Hunk<'_> {
    let lines: Vec<DLine<'_>> = split_lines(modified)
        .enumerate()
        .map(|(i, text)| DLine {
            tag: Tag::Add,
            text,
            old: None,
            new: Some(i as u64 + 1),
        })
        .collect();
    Hunk {
        header: format!("@@ -0,0 +1,{} @@", lines.len()),
        lines,
    }
}

fn compute<'a>(original: &'a str, modified: &'a str) -> Vec<Hunk<'a>> {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(original, modified);
    // Text is taken from the inputs by index so the hunks borrow them, not the diff.
    let old_lines: Vec<&'a str> = split_lines(original).collect();
    let new_lines: Vec<&'a str> = split_lines(modified).collect();
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old_start, old_end) = (first.old_range().start, last.old_range().end);
        let (new_start, new_end) = (first.new_range().start, last.new_range().end);
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = match (change.old_index(), change.new_index()) {
                    (Some(i), _) => old_lines.get(i).copied(),
                    (None, Some(i)) => new_lines.get(i).copied(),
                    (None, None) => None,
                }
                .unwrap_or("");
                let tag = match change.tag() {
                    ChangeTag::Equal => Tag::Context,
                    ChangeTag::Insert => Tag::Add,
                    ChangeTag::Delete => Tag::Del,
                };
                lines.push(DLine {
                    tag,
                    text,
                    old: change.old_index().map(|i| i as u64 + 1),
                    new: change.new_index().map(|i| i as u64 + 1),
                });
            }
        }
        // `diff -u` numbers an empty side from the line before it.
        let start = |s: usize, len: usize| if len == 0 { s } else { s + 1 };
        hunks.push(Hunk {
            header: format!(
                "@@ -{},{} +{},{} @@",
                start(old_start, old_end - old_start),
                old_end - old_start,
                start(new_start, new_end - new_start),
                new_end - new_start
            ),
            lines,
        });
    }
    hunks
}

fn tag_style(tag: Tag) -> (char, Style) {
    match tag {
        Tag::Add => ('+', Style::fg(GREEN)),
        Tag::Del => ('-', Style::fg(RED)),
        Tag::Context => (' ', Style::PLAIN),
        Tag::Note => (' ', Style::dim()),
    }
}

/// Renders `diff` into `out`; side by side when `out` is wide enough.
pub(crate) fn render(out: &mut Out, diff: &Diff<'_>) {
    if diff.hunks.is_empty() {
        out.note("(no changes)");
        return;
    }
    let max_no = diff
        .hunks
        .iter()
        .flat_map(|h| &h.lines)
        .flat_map(|l| [l.old, l.new])
        .flatten()
        .max()
        .unwrap_or(1);
    let digits = max_no.to_string().len();
    let side_by_side = out.width >= SIDE_BY_SIDE_MIN_WIDTH;
    let mut shown = 0u64;
    for hunk in &diff.hunks {
        if !out.push_spans(&[Span::new(hunk.header.clone(), Style::fg(CYAN))]) {
            break;
        }
        shown += 1;
        let done = if side_by_side {
            side_by_side_hunk(out, hunk, digits, &mut shown)
        } else {
            unified_hunk(out, hunk, digits, &mut shown)
        };
        if !done {
            break;
        }
    }
    let total = diff.line_count();
    if shown < total {
        out.add_more(total - shown);
    }
}

fn number(n: Option<u64>, digits: usize) -> String {
    match n {
        Some(n) => format!("{n:>digits$}"),
        None => " ".repeat(digits),
    }
}

fn unified_hunk(out: &mut Out, hunk: &Hunk<'_>, digits: usize, shown: &mut u64) -> bool {
    for l in &hunk.lines {
        let (sign, style) = tag_style(l.tag);
        let gutter = format!("{} {} │ ", number(l.old, digits), number(l.new, digits));
        let blank = format!("{} │ ", " ".repeat(2 * digits + 1));
        let text = if l.tag == Tag::Note {
            l.text.to_owned()
        } else {
            format!("{sign}{}", l.text)
        };
        let spans = [Span::new(sanitize::line(&text, 0), style)];
        if !out.wrapped(
            &[Span::new(gutter, Style::dim())],
            &[Span::new(blank, Style::dim())],
            &spans,
            Wrap::Chars,
        ) {
            return false;
        }
        *shown += 1;
    }
    true
}

/// One half of a row; only the left one is padded, so lines carry no trailing blanks.
fn half(line: &mut Line, l: Option<&DLine<'_>>, old_side: bool, digits: usize, width: usize) {
    let pad = old_side;
    let start = line.width();
    if let Some(l) = l {
        let (sign, style) = tag_style(l.tag);
        let no = if old_side { l.old } else { l.new };
        line.push(&format!("{} ", number(no, digits)), Style::dim());
        let text = sanitize::line(l.text, 0);
        let room = width.saturating_sub(digits + 2);
        let text = if str_width(&text) > room {
            truncate(&text, room)
        } else {
            text.into_owned()
        };
        line.push(&format!("{sign}{text}"), style);
    }
    if pad {
        line.pad_to(start + width);
    }
}

fn side_by_side_hunk(out: &mut Out, hunk: &Hunk<'_>, digits: usize, shown: &mut u64) -> bool {
    let half_width = (out.width - 3) / 2;
    let mut i = 0;
    let lines = &hunk.lines;
    while i < lines.len() {
        // Pair a run of deletions with the insertions that follow it.
        let (left, right, used): (Vec<Option<&DLine<'_>>>, Vec<Option<&DLine<'_>>>, usize) =
            match lines[i].tag {
                Tag::Del => {
                    let dels = lines[i..].iter().take_while(|l| l.tag == Tag::Del).count();
                    let adds = lines[i + dels..]
                        .iter()
                        .take_while(|l| l.tag == Tag::Add)
                        .count();
                    let rows = dels.max(adds);
                    let left = (0..rows)
                        .map(|k| (k < dels).then(|| &lines[i + k]))
                        .collect();
                    let right = (0..rows)
                        .map(|k| (k < adds).then(|| &lines[i + dels + k]))
                        .collect();
                    (left, right, dels + adds)
                }
                Tag::Add => (vec![None], vec![Some(&lines[i])], 1),
                _ => (vec![Some(&lines[i])], vec![Some(&lines[i])], 1),
            };
        for (l, r) in left.iter().zip(&right) {
            let mut line = Line::new(out.mode);
            half(&mut line, *l, true, digits, half_width);
            line.push(" │ ", Style::dim());
            half(&mut line, *r, false, digits, half_width);
            if !out.push(line.finish()) {
                return false;
            }
        }
        *shown += used as u64;
        i += used;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ColorMode;

    #[test]
    fn computed_hunks_count_changes() {
        let input = DiffInput {
            original: Some("a\nb\nc\n"),
            modified: "a\nB\nc\nd\n",
            hunks: None,
        };
        let diff = Diff::new(&input);
        assert_eq!(diff.stat(), "+2 −1");
        let mut out = Out::new(ColorMode::Off, 40, None);
        render(&mut out, &diff);
        assert_eq!(
            out.lines,
            [
                "@@ -1,3 +1,4 @@",
                "1 1 │  a",
                "2   │ -b",
                "  2 │ +B",
                "3 3 │  c",
                "  4 │ +d"
            ]
        );
    }

    #[test]
    fn new_files_are_all_added_and_cut_diffs_count_the_rest() {
        let input = DiffInput {
            original: None,
            modified: "x\ny\nz",
            hunks: None,
        };
        let diff = Diff::new(&input);
        assert_eq!(diff.stat(), "+3 −0");
        let mut out = Out::new(ColorMode::Off, 40, Some(2));
        render(&mut out, &diff);
        assert_eq!(out.lines, ["@@ -0,0 +1,3 @@", "  1 │ +x"]);
        assert_eq!(out.more(), 2);
    }
}
