//! Head-and-tail cuts of plain text, in O(budget) time whatever the text's size.

use std::borrow::Cow;

use super::{CutContext, bare_marker, count};
use crate::budget::fits;

/// Which end of a text matters more. Shell and log output put the error at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// Half head, half tail.
    Balanced,
    /// A quarter head, three quarters tail.
    Tail,
}

/// Above this, the omitted middle is described in bytes, since counting its characters and
/// lines would cost O(size) instead of O(budget). A run of parts left out whole is told
/// the same way (`render::fit_all`).
pub(crate) const COUNT_LIMIT: usize = 16 << 20;

/// `prefix` then `body`, cut to `budget` chars: the head and tail of `body` are kept, with
/// a marker between them. The prefix (e.g. a file's path) is kept whole when it fits.
pub fn cut_text<'a>(
    prefix: &str,
    body: &'a str,
    budget: usize,
    weight: Weight,
    ctx: CutContext<'_>,
) -> Cow<'a, str> {
    if prefix.is_empty() && fits(body, budget) {
        return Cow::Borrowed(body);
    }
    if fits(prefix, budget) {
        let prefix_chars = prefix.chars().count();
        if fits(body, budget - prefix_chars) {
            return Cow::Owned(format!("{prefix}{body}"));
        }
        if let Some(cut) = cut_body(prefix, prefix_chars, body, budget, weight, ctx) {
            return Cow::Owned(cut);
        }
    }
    if let Some(cut) = cut_body("", 0, body, budget, weight, ctx) {
        return Cow::Owned(cut);
    }
    Cow::Owned(bare_marker(ctx, budget))
}

/// The cut, or `None` when prefix and marker alone leave no room.
fn cut_body(
    prefix: &str,
    prefix_chars: usize,
    body: &str,
    budget: usize,
    weight: Weight,
    ctx: CutContext<'_>,
) -> Option<String> {
    // The marker is sized for the worst case first (every count as large as the body), so
    // the real one, written after the cut, can only be shorter.
    let worst = marker(body.len(), body.len(), Some(body.len()), body.len(), ctx);
    let marker_chars = worst.chars().count();
    let avail = budget.checked_sub(prefix_chars + marker_chars)?;
    let head_want = match weight {
        Weight::Balanced => avail / 2,
        Weight::Tail => avail / 4,
    };
    let tail_want = avail - head_want;

    let mut head_end = byte_after_chars(body, head_want);
    let mut tail_start = byte_before_last_chars(body, tail_want);
    // Prefer whole lines when a line break is near the cut.
    if let Some(nl) = body[..head_end].rfind('\n')
        && (nl + 1) * 5 >= head_end * 4
    {
        head_end = nl + 1;
    }
    let tail = &body[tail_start..];
    if let Some(nl) = tail.find('\n')
        && nl * 5 < tail.len()
    {
        tail_start += nl + 1;
    }
    if tail_start < head_end {
        tail_start = head_end;
    }

    let head = &body[..head_end];
    let middle = &body[head_end..tail_start];
    let head_chars = head.chars().count();
    let (chars, lines) = if middle.len() <= COUNT_LIMIT {
        (
            Some(middle.chars().count()),
            Some(middle.bytes().filter(|&b| b == b'\n').count()),
        )
    } else {
        (None, None)
    };
    let m = marker(middle.len(), chars.unwrap_or(0), lines, head_chars, ctx);
    let mut out =
        String::with_capacity(prefix.len() + head.len() + m.len() + body.len() - tail_start);
    out.push_str(prefix);
    out.push_str(head);
    out.push_str(&m);
    out.push_str(&body[tail_start..]);
    Some(out)
}

/// `\n[… 1,234 chars (56 lines) omitted; read them with read_result {…} …]\n`, or in bytes
/// when the middle was too large to count.
fn marker(
    bytes: usize,
    chars: usize,
    lines: Option<usize>,
    offset: usize,
    ctx: CutContext<'_>,
) -> String {
    let what = match lines {
        Some(lines) => format!("{} chars ({} lines)", count(chars), count(lines)),
        None => format!("{} bytes", count(bytes)),
    };
    format!(
        "\n[… {what} omitted by toolwire; read them with {} …]\n",
        ctx.read_call(offset)
    )
}

/// Byte index just after the first `n` chars (or the end).
fn byte_after_chars(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Byte index where the last `n` chars start (or 0).
fn byte_before_last_chars(s: &str, n: usize) -> usize {
    if n == 0 {
        return s.len();
    }
    s.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: CutContext<'static> = CutContext {
        call_id: "call_1",
        part: 0,
    };

    #[test]
    fn under_budget_is_borrowed_unchanged() {
        assert!(matches!(
            cut_text("", "hello", 5, Weight::Balanced, CTX),
            Cow::Borrowed("hello")
        ));
    }

    #[test]
    fn keeps_head_and_tail_and_says_how_much_was_cut() {
        let body: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let out = cut_text("", &body, 400, Weight::Balanced, CTX);
        assert!(out.chars().count() <= 400, "{}", out.chars().count());
        assert!(out.starts_with("line 0\n"));
        assert!(out.ends_with("line 999\n"));
        assert!(out.contains("lines) omitted by toolwire; read them with read_result {\"callId\":\"call_1\",\"part\":0,\"offset\":"));
    }

    #[test]
    fn tail_weighting_keeps_the_error_at_the_end() {
        let body = format!("{}ERROR: disk full\n", "building...\n".repeat(10_000));
        let out = cut_text("", &body, 300, Weight::Tail, CTX);
        assert!(out.ends_with("ERROR: disk full\n"));
        let marker_at = out.find("[…").unwrap();
        assert!(marker_at < out.len() / 2, "head should be the smaller part");
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let body = "é🙂".repeat(1000);
        let out = cut_text("path\n", &body, 200, Weight::Balanced, CTX);
        assert!(out.chars().count() <= 200);
        assert!(out.starts_with("path\né"));
    }

    #[test]
    fn tiny_budgets_still_hold() {
        for budget in 0..120 {
            let body = "x".repeat(500);
            let out = cut_text("some/path\n", &body, budget, Weight::Balanced, CTX);
            assert!(out.chars().count() <= budget, "budget {budget}: {out}");
        }
    }
}
