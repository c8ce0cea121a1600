//! Depth guard: JSON nested deeper than we can safely recurse into is kept as a JSON string.
//!
//! serde_json's parser stops at 128 levels, but a `serde_json::Value` built in memory can be
//! nested 100,000 deep, and every recursive walk over it (clone, drop, serialize) would
//! overflow the stack. Everything here that touches an unbounded subtree is iterative.

use serde_json::{Map, Value as Json};

use crate::{Diagnostics, Path};

/// Raw payloads are cut below this depth. The canonical envelope adds a few levels
/// (`output[i].data`), and stored results must reparse under serde_json's 128 limit.
pub const MAX_DEPTH: usize = 100;

const CUT: &str = "nested deeper than 100 levels; kept as a JSON string";

/// Replaces every container at depth [`MAX_DEPTH`] in place with its compact JSON text.
pub(crate) fn clamp(value: &mut Json, diags: &mut Diagnostics) {
    // The common case, a shallow payload, is checked without building any path.
    if exceeds(value, 0) {
        clamp_at(value, 0, &Path::Root, diags);
    }
}

/// Whether `value`, found at `depth` in a payload, reaches past [`MAX_DEPTH`].
pub(crate) fn exceeds_from(value: &Json, depth: usize) -> bool {
    exceeds(value, depth)
}

/// Whether anything in `value` is a non-empty container at [`MAX_DEPTH`]. Recursion is
/// bounded by `MAX_DEPTH` itself.
fn exceeds(value: &Json, depth: usize) -> bool {
    if depth >= MAX_DEPTH {
        return is_nonempty_container(value);
    }
    match value {
        Json::Array(items) => items.iter().any(|v| exceeds(v, depth + 1)),
        Json::Object(map) => map.values().any(|v| exceeds(v, depth + 1)),
        _ => false,
    }
}

fn clamp_at(value: &mut Json, depth: usize, path: &Path<'_>, diags: &mut Diagnostics) {
    if depth >= MAX_DEPTH {
        if is_nonempty_container(value) {
            let deep = std::mem::take(value);
            *value = Json::String(to_string_iterative(&deep));
            dismantle(deep);
            diags.push(path, CUT);
        }
        return;
    }
    match value {
        Json::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                clamp_at(item, depth + 1, &path.index(i), diags);
            }
        }
        Json::Object(map) => {
            for (key, item) in map.iter_mut() {
                clamp_at(item, depth + 1, &path.key(key), diags);
            }
        }
        _ => {}
    }
}

/// Clones `value` with the same depth rule as [`clamp`], never recursing past it.
pub(crate) fn clone_clamped(value: &Json, diags: &mut Diagnostics) -> Json {
    clone_at(value, 0, &Path::Root, diags)
}

fn clone_at(value: &Json, depth: usize, path: &Path<'_>, diags: &mut Diagnostics) -> Json {
    if depth >= MAX_DEPTH && is_nonempty_container(value) {
        diags.push(path, CUT);
        return Json::String(to_string_iterative(value));
    }
    match value {
        Json::Array(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| clone_at(item, depth + 1, &path.index(i), diags))
                .collect(),
        ),
        Json::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                out.insert(
                    key.clone(),
                    clone_at(item, depth + 1, &path.key(key), diags),
                );
            }
            Json::Object(out)
        }
        leaf => leaf.clone(),
    }
}

fn is_nonempty_container(value: &Json) -> bool {
    match value {
        Json::Array(a) => !a.is_empty(),
        Json::Object(m) => !m.is_empty(),
        _ => false,
    }
}

/// Compact JSON text of any value, with an explicit stack instead of recursion.
pub fn to_string_iterative(value: &Json) -> String {
    enum Step<'a> {
        Value(&'a Json),
        Key(&'a str),
        Raw(&'static str),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Raw(s) => out.push_str(s),
            Step::Key(k) => {
                out.push_str(&Json::String(k.to_owned()).to_string());
                out.push(':');
            }
            Step::Value(Json::Array(items)) => {
                out.push('[');
                stack.push(Step::Raw("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if i > 0 {
                        stack.push(Step::Raw(","));
                    }
                }
            }
            Step::Value(Json::Object(map)) => {
                out.push('{');
                stack.push(Step::Raw("}"));
                let entries: Vec<_> = map.iter().collect();
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(v));
                    stack.push(Step::Key(k));
                    if i > 0 {
                        stack.push(Step::Raw(","));
                    }
                }
            }
            // Leaves have no children, so serde_json's own writer cannot recurse here.
            Step::Value(leaf) => out.push_str(&leaf.to_string()),
        }
    }
    out
}

/// Drops a value of any depth without recursion: children are moved onto a heap stack
/// before their parent is freed.
pub fn dismantle(value: Json) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Json::Array(items) => stack.extend(items),
            Json::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deep_array(depth: usize) -> Json {
        let mut v = json!(1);
        for _ in 0..depth {
            v = Json::Array(vec![v]);
        }
        v
    }

    #[test]
    fn iterative_writer_matches_serde_json() {
        let v = json!({"a": [1, "two", null, {"b\"c": [true, 2.5]}], "": {}, "e": []});
        assert_eq!(to_string_iterative(&v), v.to_string());
    }

    #[test]
    fn deep_values_are_clamped_without_overflow() {
        let mut v = deep_array(100_000);
        let mut diags = Diagnostics::default();
        let cloned = clone_clamped(&v, &mut diags);
        clamp(&mut v, &mut diags);
        assert_eq!(cloned, v);
        assert_eq!(diags.0.len(), 2);
        // The kept text is the exact remainder: 100,000 - 100 levels of brackets.
        let mut inner = &v;
        for _ in 0..MAX_DEPTH {
            inner = &inner[0];
        }
        let text = inner.as_str().unwrap();
        assert_eq!(text.len(), 2 * (100_000 - MAX_DEPTH) + 1);
        dismantle(v);
        dismantle(cloned);
    }
}
