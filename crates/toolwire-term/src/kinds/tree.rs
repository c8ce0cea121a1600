//! Any JSON as a tree: keys, nesting glyphs, typed scalar colours.

use serde_json::Value as Json;

use crate::kinds::text::count_lines;
use crate::out::{Out, Wrap};
use crate::sanitize;
use crate::style::{BLUE, CYAN, GREEN, MAGENTA, Span, Style, YELLOW};

/// Renders `json`; when cut, the left-out node count is added to `out`.
pub(crate) fn render(out: &mut Out, json: &Json) {
    let total = out.limit().map(|_| lines_of(json));
    // Nodes drawn whole: a long string cut mid-wrap is not, so it counts as left out,
    // as a cut line of text does.
    let mut drawn = 0u64;
    match json {
        Json::Object(map) if !map.is_empty() => {
            let n = map.len();
            for (i, (k, v)) in map.iter().enumerate() {
                if !node(out, &mut drawn, "", i + 1 == n, Some(Label::Key(k)), v) {
                    break;
                }
            }
        }
        Json::Array(items) if !items.is_empty() => {
            let n = items.len();
            for (i, v) in items.iter().enumerate() {
                if !node(out, &mut drawn, "", i + 1 == n, Some(Label::Index(i, v)), v) {
                    break;
                }
            }
        }
        scalar => {
            let spans = scalar_spans(scalar);
            if out.wrapped(&[], &[], &spans, Wrap::Chars) {
                drawn += 1;
            }
        }
    }
    if let Some(total) = total
        && total > drawn
    {
        out.add_more(total - drawn);
    }
}

/// Nodes in the full tree, one line each when not wrapped (the unit "more" counts in).
fn lines_of(json: &Json) -> u64 {
    match json {
        Json::Object(map) if !map.is_empty() => map.values().map(node_lines).sum(),
        Json::Array(items) if !items.is_empty() => items.iter().map(node_lines).sum(),
        _ => 1,
    }
}

fn node_lines(json: &Json) -> u64 {
    match json {
        Json::Object(map) if !map.is_empty() => 1 + map.values().map(node_lines).sum::<u64>(),
        Json::Array(items) if !items.is_empty() => 1 + items.iter().map(node_lines).sum::<u64>(),
        _ => 1,
    }
}

enum Label<'a> {
    Key(&'a str),
    /// Array items are labelled `[i]` only when they are containers.
    Index(usize, &'a Json),
}

fn is_container(v: &Json) -> bool {
    matches!(v, Json::Object(m) if !m.is_empty()) || matches!(v, Json::Array(a) if !a.is_empty())
}

/// Pushes one node and its children, counting in `drawn` each node drawn whole; `false`
/// once `out` is full.
fn node(
    out: &mut Out,
    drawn: &mut u64,
    prefix: &str,
    last: bool,
    label: Option<Label<'_>>,
    value: &Json,
) -> bool {
    if !out.room() {
        return false;
    }
    let glyph = if last { "└─ " } else { "├─ " };
    let mut spans = vec![Span::new(format!("{prefix}{glyph}"), Style::dim())];
    match &label {
        Some(Label::Key(k)) => spans.push(Span::new(sanitize::inline(k), Style::fg(CYAN))),
        Some(Label::Index(i, v)) if is_container(v) => {
            spans.push(Span::new(format!("[{i}]"), Style::dim()))
        }
        _ => {}
    }
    let child_prefix = format!("{prefix}{}", if last { "   " } else { "│  " });
    match value {
        Json::Object(map) if !map.is_empty() => {
            spans.push(Span::new(format!(" {{{}}}", map.len()), Style::dim()));
            if !out.push_spans(&spans) {
                return false;
            }
            *drawn += 1;
            let n = map.len();
            for (i, (k, v)) in map.iter().enumerate() {
                if !node(
                    out,
                    drawn,
                    &child_prefix,
                    i + 1 == n,
                    Some(Label::Key(k)),
                    v,
                ) {
                    return false;
                }
            }
            true
        }
        Json::Array(items) if !items.is_empty() => {
            spans.push(Span::new(format!(" [{}]", items.len()), Style::dim()));
            if !out.push_spans(&spans) {
                return false;
            }
            *drawn += 1;
            let n = items.len();
            for (i, v) in items.iter().enumerate() {
                let label = Some(Label::Index(i, v));
                if !node(out, drawn, &child_prefix, i + 1 == n, label, v) {
                    return false;
                }
            }
            true
        }
        Json::String(s) if s.contains('\n') => {
            // Lines of text (a log, a message, a file) read as lines, not as one escaped
            // JSON string wrapped mid-word: a count after the key, then each line below it,
            // sanitized as any text line, word-wrapped under the key.
            if matches!(label, Some(Label::Key(_))) {
                spans.push(Span::new(":", Style::dim()));
            }
            let body = s.strip_suffix('\n').unwrap_or(s);
            let n = count_lines(body).max(1);
            spans.push(Span::new(
                format!(" ({})", crate::fmt::plural(n, "line", "lines")),
                Style::dim(),
            ));
            if !out.push_spans(&spans) {
                return false;
            }
            let indent = [Span::new(format!("{child_prefix}  "), Style::dim())];
            for line in body.split('\n') {
                if !out.room() {
                    return false;
                }
                let text = [Span::new(sanitize::line(line, 0), Style::fg(GREEN))];
                if !out.wrapped(&indent, &indent, &text, Wrap::Words) {
                    return false;
                }
            }
            *drawn += 1;
            true
        }
        scalar => {
            if matches!(label, Some(Label::Key(_))) {
                spans.push(Span::new(": ", Style::dim()));
            }
            let first_width: usize = spans.iter().map(|s| crate::out::str_width(&s.text)).sum();
            let cont = vec![Span::new(
                format!(
                    "{child_prefix}{}",
                    " ".repeat(first_width.saturating_sub(child_prefix.chars().count()))
                ),
                Style::dim(),
            )];
            let whole = out.wrapped(&spans, &cont, &scalar_spans(scalar), Wrap::Chars);
            if whole {
                *drawn += 1;
            }
            whole
        }
    }
}

/// A scalar as JSON would write it (strings quoted and escaped, which also makes every
/// C0 control visible as `\u001b`), coloured by type.
pub(crate) fn scalar_spans(v: &Json) -> Vec<Span> {
    let (text, color) = match v {
        Json::String(s) => (serde_json::to_string(s).unwrap_or_default(), GREEN),
        Json::Number(n) => (n.to_string(), YELLOW),
        Json::Bool(b) => (b.to_string(), MAGENTA),
        Json::Null => ("null".to_owned(), MAGENTA),
        Json::Object(_) => ("{}".to_owned(), BLUE),
        Json::Array(_) => ("[]".to_owned(), BLUE),
    };
    vec![Span::new(sanitize::inline(&text), Style::fg(color))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ColorMode;
    use serde_json::json;

    #[test]
    fn nested_json_draws_as_a_tree() {
        let mut out = Out::new(ColorMode::Off, 40, None);
        render(
            &mut out,
            &json!({"branch": "main", "staged": ["a.rs", "b.rs"], "n": {"x": 1}}),
        );
        assert_eq!(
            out.lines,
            // In the order the keys were written.
            [
                "├─ branch: \"main\"",
                "├─ staged [2]",
                "│  ├─ \"a.rs\"",
                "│  └─ \"b.rs\"",
                "└─ n {1}",
                "   └─ x: 1",
            ]
        );
    }

    #[test]
    fn a_cut_tree_counts_the_rest() {
        let mut out = Out::new(ColorMode::Off, 40, Some(2));
        render(&mut out, &json!({"a": [1, 2, 3], "b": 2}));
        assert_eq!(out.lines.len(), 2);
        assert_eq!(out.more(), 3);
    }

    /// A string of several lines shows as those lines under its key, unescaped, wrapped
    /// at word boundaries; controls in it still show as their stand-ins.
    #[test]
    fn a_multi_line_string_shows_as_lines() {
        let mut out = Out::new(ColorMode::Off, 30, None);
        render(
            &mut out,
            &json!({"log": "error: cannot find value `x`\n\tat main.rs:3\x1b[2J\n", "n": 1}),
        );
        assert_eq!(
            out.lines,
            [
                "├─ log: (2 lines)",
                "│    error: cannot find value",
                "│    `x`",
                "│        at main.rs:3␛[2J",
                "└─ n: 1",
            ]
        );
        assert_eq!(out.more(), 0);
        let mut out = Out::new(ColorMode::Off, 30, Some(2));
        render(&mut out, &json!({"log": "a\nb\nc", "n": 1}));
        assert_eq!(out.lines, ["├─ log: (3 lines)", "│    a"]);
        assert_eq!(out.more(), 2);
    }

    /// A long string wraps over many rows; cut mid-way it is left out in part, and the
    /// marker says so (as for a cut line of text), with the nodes after it.
    #[test]
    fn a_cut_long_string_counts_as_more() {
        let long = "x".repeat(10_000);
        let mut out = Out::new(ColorMode::Off, 40, Some(5));
        render(&mut out, &json!({"content": long, "after": 1}));
        assert_eq!(out.lines.len(), 5);
        assert_eq!(out.more(), 2);
        let mut out = Out::new(ColorMode::Off, 40, Some(5));
        render(&mut out, &json!(long));
        assert_eq!(out.more(), 1);
        // Wrapped but whole: nothing more.
        let mut out = Out::new(ColorMode::Off, 40, Some(5));
        render(&mut out, &json!({"content": "y".repeat(60)}));
        assert!(out.lines.len() > 1, "{:?}", out.lines);
        assert_eq!(out.more(), 0);
    }
}
