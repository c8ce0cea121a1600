//! Arrays of like records drawn as a table rather than a tree: `[{..}, {..}]`, or an object
//! holding one such array beside scalars (ruff's `{"issues": [..]}`). A tree of 3,000
//! records is 30,000 lines; their table is one screen with a count of the rest.

use serde_json::Value as Json;

use crate::kinds::table::{self, ColSpec};
use crate::kinds::tree;
use crate::out::{Out, Wrap};
use crate::sanitize;
use crate::style::{CYAN, Span, Style};

/// Rows scanned to find the columns and judge the likeness; keys first seen later are
/// left out, as in a generic table.
const SCAN_ROWS: usize = 1000;
/// More distinct keys than this is not a table a person can read: it stays a tree.
const MAX_COLUMNS: usize = 40;
/// Screen columns each table column gets at least (border and padding included): keys a
/// tool chose are not all worth a column, so a narrow terminal shows fewer of them,
/// readable, and says how many more there are, rather than all of them as `…`.
const MIN_COL_WIDTH: usize = 10;

/// The columns (keys in first-seen order) of `items` when they are like records: at least
/// two items, all objects, each scanned one holding at least half of the keys seen, and
/// at least half of their values scalars (nested values show as compact JSON in a cell).
/// Keys null in every scanned row are left out.
pub(crate) fn columns(items: &[Json]) -> Option<Vec<&str>> {
    if items.len() < 2 || !items.iter().all(Json::is_object) {
        return None;
    }
    let scanned = || items.iter().take(SCAN_ROWS).filter_map(Json::as_object);
    let mut keys: Vec<&str> = Vec::new();
    for map in scanned() {
        for k in map.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
                if keys.len() > MAX_COLUMNS {
                    return None;
                }
            }
        }
    }
    if keys.is_empty() {
        return None;
    }
    let (mut values, mut scalars) = (0usize, 0usize);
    for map in scanned() {
        if map.len() * 2 < keys.len() {
            return None;
        }
        values += map.len();
        scalars += map.values().filter(|v| !is_container(v)).count();
    }
    if scalars * 2 < values {
        return None;
    }
    // A key that is null or missing in every scanned row would be an empty column.
    let filled: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| scanned().any(|m| m.get(*k).is_some_and(|v| !v.is_null())))
        .collect();
    Some(if filled.is_empty() { keys } else { filled })
}

fn is_container(v: &Json) -> bool {
    matches!(v, Json::Object(m) if !m.is_empty()) || matches!(v, Json::Array(a) if !a.is_empty())
}

/// The key of the one like-records array in `map`, when every other value is a scalar.
fn holder(map: &serde_json::Map<String, Json>) -> Option<(&str, &[Json], Vec<&str>)> {
    let mut found = None;
    for (k, v) in map {
        match v {
            Json::Array(items) if found.is_none() => match columns(items) {
                Some(cols) => found = Some((k.as_str(), items.as_slice(), cols)),
                None if is_container(v) => return None,
                None => {}
            },
            v if is_container(v) => return None,
            _ => {}
        }
    }
    found
}

/// Draws `json` as a table when it is (or holds) like records, else as a tree.
pub(crate) fn render_or_tree(out: &mut Out, json: &Json, expand: bool) {
    match json {
        Json::Array(items) => match columns(items) {
            Some(keys) => {
                let cols: Vec<ColSpec<'_>> = keys.into_iter().map(ColSpec::plain).collect();
                table::render_with(out, &cols, items, expand, MIN_COL_WIDTH);
            }
            None => tree::render(out, json),
        },
        Json::Object(map) => match holder(map) {
            Some((key, items, keys)) => held(out, map, key, items, keys, expand),
            None => tree::render(out, json),
        },
        _ => tree::render(out, json),
    }
}

/// The holder's scalars as `key: value` lines in their order, its array as a titled table
/// where it stands; the table leaves room for the scalars after it.
fn held(
    out: &mut Out,
    map: &serde_json::Map<String, Json>,
    key: &str,
    items: &[Json],
    keys: Vec<&str>,
    expand: bool,
) {
    let after = map
        .keys()
        .skip_while(|k| k.as_str() != key)
        .count()
        .saturating_sub(1);
    let mut left_out = 0u64;
    for (k, v) in map {
        let label = Span::new(sanitize::inline(k), Style::fg(CYAN));
        if k == key {
            let title = [
                label,
                Span::new(format!(" [{}]", items.len()), Style::dim()),
            ];
            if !out.push_spans(&title) {
                left_out += 1;
                continue;
            }
            let cols: Vec<ColSpec<'_>> = keys.iter().map(|k| ColSpec::plain(k)).collect();
            let room = out.remaining().map(|r| r.saturating_sub(after).max(1));
            let mut body = Out::new(out.mode, out.width, room);
            table::render_with(&mut body, &cols, items, expand, MIN_COL_WIDTH);
            for line in body.lines {
                out.push_always(line);
            }
            continue;
        }
        if !out.room() {
            left_out += 1;
            continue;
        }
        let first = [label, Span::new(": ", Style::dim())];
        if !out.wrapped(&first, &[], &tree::scalar_spans(v), Wrap::Chars) {
            left_out += 1;
        }
    }
    out.add_more(left_out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ColorMode;
    use serde_json::json;

    fn issues(n: usize) -> Vec<Json> {
        (0..n)
            .map(|i| {
                json!({"code": format!("F{i:03}"), "line": i + 1, "message": "unused import",
                       "fix": {"applicability": "safe"}})
            })
            .collect()
    }

    #[test]
    fn like_records_are_a_table_with_a_count_of_the_rest() {
        let mut out = Out::new(ColorMode::Off, 60, Some(14));
        render_or_tree(&mut out, &Json::Array(issues(3000)), false);
        let text = out.lines.join("\n");
        assert!(out.lines.len() <= 14, "{text}");
        assert!(text.contains("│ code ") && text.contains("F000") && text.contains("F2999"));
        assert!(text.contains("more rows (showing"), "{text}");
        // Nested values are compact JSON in their cell.
        assert!(text.contains(r#"{"applicability":"safe"}"#), "{text}");
    }

    #[test]
    fn an_object_holding_records_keeps_its_scalars_in_order() {
        let data = json!({"tool": "ruff", "issues": issues(7), "count": 7});
        let mut out = Out::new(ColorMode::Off, 70, Some(20));
        render_or_tree(&mut out, &data, false);
        assert_eq!(out.lines[0], "tool: \"ruff\"");
        assert_eq!(out.lines[1], "issues [7]");
        assert!(out.lines[2].starts_with('┌'), "{:#?}", out.lines);
        assert_eq!(out.lines.last().map(String::as_str), Some("count: 7"));
        // 7 rows, 4 lines of borders and header, 3 lines of its own: well under a tree's 60.
        assert_eq!(out.lines.len(), 14, "{:#?}", out.lines);
    }

    #[test]
    fn irregular_or_nested_arrays_stay_trees() {
        for data in [
            json!([{"a": 1}]),
            json!([{"a": 1, "b": 2, "c": 3, "d": 4}, {"e": 5}]),
            json!([{"a": {"x": 1}, "b": [1]}, {"a": {"y": 2}, "b": [2]}]),
            json!([{"a": 1}, 2]),
            json!({"xs": [{"a": 1}, {"a": 2}], "ys": [{"b": 1}, {"b": 2}]}),
            json!({"xs": [{"a": 1}, {"a": 2}], "nested": {"k": 1}}),
        ] {
            let mut out = Out::new(ColorMode::Off, 60, None);
            render_or_tree(&mut out, &data, false);
            assert!(
                out.lines.iter().any(|l| l.contains("─ ")) && !out.lines[0].starts_with('┌'),
                "{data}: {:#?}",
                out.lines
            );
        }
    }
}
