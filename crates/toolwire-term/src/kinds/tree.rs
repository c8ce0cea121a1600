//! Any JSON as a tree: keys, nesting glyphs, typed scalar colours.

use serde_json::Value as Json;

use crate::out::{Out, Wrap};
use crate::sanitize;
use crate::style::{BLUE, CYAN, GREEN, MAGENTA, Span, Style, YELLOW};

/// Renders `json`; when cut, the left-out node count is added to `out`.
pub(crate) fn render(out: &mut Out, json: &Json) {
    let total = out.limit().map(|_| lines_of(json));
    let before = out.lines.len();
    match json {
        Json::Object(map) if !map.is_empty() => {
            let n = map.len();
            for (i, (k, v)) in map.iter().enumerate() {
                if !node(out, "", i + 1 == n, Some(Label::Key(k)), v) {
                    break;
                }
            }
        }
        Json::Array(items) if !items.is_empty() => {
            let n = items.len();
            for (i, v) in items.iter().enumerate() {
                if !node(out, "", i + 1 == n, Some(Label::Index(i, v)), v) {
                    break;
                }
            }
        }
        scalar => {
            let spans = scalar_spans(scalar);
            out.wrapped(&[], &[], &spans, Wrap::Chars);
        }
    }
    if let Some(total) = total {
        let shown = (out.lines.len() - before) as u64;
        if total > shown {
            out.add_more(total - shown);
        }
    }
}

/// Lines the full tree takes (one per node; wrapped long strings count once).
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

/// Pushes one node and its children; `false` once `out` is full.
fn node(out: &mut Out, prefix: &str, last: bool, label: Option<Label<'_>>, value: &Json) -> bool {
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
            let n = map.len();
            for (i, (k, v)) in map.iter().enumerate() {
                if !node(out, &child_prefix, i + 1 == n, Some(Label::Key(k)), v) {
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
            let n = items.len();
            for (i, v) in items.iter().enumerate() {
                if !node(out, &child_prefix, i + 1 == n, Some(Label::Index(i, v)), v) {
                    return false;
                }
            }
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
            out.wrapped(&spans, &cont, &scalar_spans(scalar), Wrap::Chars)
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
}
