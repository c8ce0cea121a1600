//! Cuts of line-structured text: tables and listings keep their header, first and last
//! items and counts; diffs keep every file and hunk header.

use super::{CutContext, Weight, count, cut_text};
use crate::budget::fair_shares;

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn join(lines: &[&str]) -> String {
    lines.join("\n")
}

/// A header, items (rows or entries) and a footer, one per line. When they do not fit,
/// the first and last items are kept and the middle is replaced by one marker line naming
/// the omitted range; `unit` is what an item is called ("rows", "entries").
pub fn cut_lines(
    header: &[&str],
    items: &[String],
    footer: &[&str],
    unit: &str,
    budget: usize,
    ctx: CutContext<'_>,
) -> String {
    let mut all: Vec<&str> = header.to_vec();
    all.extend(items.iter().map(String::as_str));
    all.extend_from_slice(footer);
    let full = join(&all);
    if chars(&full) <= budget {
        return full;
    }
    let fixed: usize = header.iter().chain(footer).map(|l| chars(l) + 1).sum();
    let worst = items_marker(items.len(), items.len(), items.len(), unit, ctx);
    let Some(mut avail) = budget.checked_sub(fixed + chars(&worst)) else {
        return cut_text("", &full, budget, Weight::Balanced, ctx).into_owned();
    };
    let cost = |i: usize| chars(&items[i]) + 1;
    let (mut head, mut tail) = (0usize, 0usize);
    // First rows until half the room is used, then last rows, then more first rows.
    let half = avail / 2;
    let mut used = 0;
    while head < items.len() && used + cost(head) <= half {
        used += cost(head);
        head += 1;
    }
    avail -= used;
    while head + tail < items.len() && cost(items.len() - 1 - tail) <= avail {
        avail -= cost(items.len() - 1 - tail);
        tail += 1;
    }
    while head + tail < items.len() && cost(head) <= avail {
        avail -= cost(head);
        head += 1;
    }
    let omitted = items.len() - head - tail;
    let marker = items_marker(omitted, head, items.len(), unit, ctx);
    let mut lines: Vec<&str> = header.to_vec();
    lines.extend(items[..head].iter().map(String::as_str));
    lines.push(&marker);
    lines.extend(items[items.len() - tail..].iter().map(String::as_str));
    lines.extend_from_slice(footer);
    let out = join(&lines);
    guard(out, budget, ctx)
}

/// `[… 9,940 rows omitted (31–9,970 of 10,000); read them with read_result {…} …]`.
fn items_marker(
    omitted: usize,
    first: usize,
    total: usize,
    unit: &str,
    ctx: CutContext<'_>,
) -> String {
    format!(
        "[… {} {unit} omitted by toolwire ({}–{} of {}); read them with {} …]",
        count(omitted),
        count(first + 1),
        count(first + omitted),
        count(total),
        ctx.read_call(first)
    )
}

/// A unified diff cut to `budget`: `---`, `+++` and `@@` lines are always kept; each hunk
/// keeps its first lines within a fair share of the room, then a marker line. Offsets in
/// markers are line numbers of the full diff text.
pub fn cut_diff(diff: &str, budget: usize, ctx: CutContext<'_>) -> String {
    if chars(diff) <= budget {
        return diff.to_owned();
    }
    let lines: Vec<&str> = diff.lines().collect();
    let is_header = |l: &str| l.starts_with("--- ") || l.starts_with("+++ ") || l.starts_with("@@");
    // Bodies: runs of non-header lines, as (start, end) line ranges.
    let mut bodies: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if is_header(lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && !is_header(lines[i]) {
            i += 1;
        }
        bodies.push((start, i));
    }
    let fixed: usize = lines
        .iter()
        .filter(|l| is_header(l))
        .map(|l| chars(l) + 1)
        .sum();
    let worst = lines_marker(lines.len(), lines.len(), ctx);
    let marker_cost = chars(&worst) + 1;
    let Some(avail) = budget.checked_sub(fixed) else {
        return cut_text("", diff, budget, Weight::Balanced, ctx).into_owned();
    };
    let costs: Vec<usize> = bodies
        .iter()
        .map(|&(s, e)| lines[s..e].iter().map(|l| chars(l) + 1).sum())
        .collect();
    let shares = fair_shares(&costs, avail);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut next = 0;
    for (b, &(start, end)) in bodies.iter().enumerate() {
        out.extend(lines[next..start].iter().map(|l| (*l).to_owned()));
        next = end;
        if costs[b] <= shares[b] {
            out.extend(lines[start..end].iter().map(|l| (*l).to_owned()));
            continue;
        }
        let room = shares[b].saturating_sub(marker_cost);
        let mut used = 0;
        let mut keep = start;
        while keep < end && used + chars(lines[keep]) < room {
            used += chars(lines[keep]) + 1;
            keep += 1;
        }
        out.extend(lines[start..keep].iter().map(|l| (*l).to_owned()));
        if shares[b] >= marker_cost {
            out.push(lines_marker(end - keep, keep, ctx));
        }
    }
    out.extend(lines[next..].iter().map(|l| (*l).to_owned()));
    guard(out.join("\n"), budget, ctx)
}

fn lines_marker(omitted: usize, first: usize, ctx: CutContext<'_>) -> String {
    format!(
        "[… {} lines of this hunk omitted by toolwire; read them with {} …]",
        count(omitted),
        ctx.read_call(first)
    )
}

/// Structure first, but never over budget: a structural cut that still does not fit
/// (huge header lines, markers that did not fit) falls back to a plain head/tail cut.
fn guard(out: String, budget: usize, ctx: CutContext<'_>) -> String {
    if chars(&out) <= budget {
        out
    } else {
        cut_text("", &out, budget, Weight::Balanced, ctx).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: CutContext<'static> = CutContext {
        call_id: "c",
        part: 1,
    };

    #[test]
    fn table_keeps_header_first_and_last_rows_and_count() {
        let rows: Vec<String> = (0..10_000).map(|i| format!("file{i} | {i}")).collect();
        let out = cut_lines(&["name | size"], &rows, &["10,000 rows"], "rows", 1000, CTX);
        assert!(chars(&out) <= 1000);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "name | size");
        assert_eq!(lines[1], "file0 | 0");
        assert_eq!(lines[lines.len() - 2], "file9999 | 9999");
        assert_eq!(lines[lines.len() - 1], "10,000 rows");
        assert!(out.contains("rows omitted by toolwire ("), "{out}");
        assert!(out.contains(
            "of 10,000); read them with read_result {\"callId\":\"c\",\"part\":1,\"offset\":"
        ));
    }

    #[test]
    fn diff_keeps_every_hunk_header() {
        let mut diff = String::from("--- a/x\n+++ b/x\n");
        for h in 0..5 {
            diff.push_str(&format!("@@ -{0},100 +{0},100 @@\n", h * 200 + 1));
            for l in 0..100 {
                diff.push_str(&format!("+added line {l} of hunk {h}\n"));
            }
        }
        let out = cut_diff(&diff, 1500, CTX);
        assert!(chars(&out) <= 1500, "{}", chars(&out));
        assert_eq!(out.lines().filter(|l| l.starts_with("@@")).count(), 5);
        assert!(out.contains("lines of this hunk omitted"));
    }
}
