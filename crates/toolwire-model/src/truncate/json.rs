//! Cuts of JSON that stay valid JSON: long arrays keep their first and last items, long
//! strings their head and tail, deep nesting is summarized, each with a count.

use serde_json::{Map, Value as Json};

use super::{CutContext, Weight, count, cut_text};

/// Limits tried in turn, loosest first, until the JSON fits.
const STEPS: [(usize, usize, usize); 10] = [
    (200, 4000, 64),
    (50, 2000, 64),
    (20, 1000, 64),
    (10, 400, 32),
    (6, 200, 16),
    (4, 100, 8),
    (2, 60, 6),
    (1, 40, 4),
    (1, 20, 2),
    (0, 10, 1),
];

#[derive(Debug, Default, Clone, Copy)]
struct Omitted {
    items: usize,
    chars: usize,
    containers: usize,
}

/// `summary` (if any) on its own line, then compact JSON; when over `budget`, the JSON is
/// shortened (still valid) and a last line says what was left out.
pub fn cut_json(summary: Option<&str>, value: &Json, budget: usize, ctx: CutContext<'_>) -> String {
    let head = summary.map(|s| format!("{s}\n")).unwrap_or_default();
    let compact = value.to_string();
    let full = format!("{head}{compact}");
    if full.chars().count() <= budget {
        return full;
    }
    for (max_items, max_str, max_depth) in STEPS {
        let mut omitted = Omitted::default();
        let short = elide(value, max_items, max_str, max_depth, 0, &mut omitted);
        let note = format!(
            "\n[… JSON shortened by toolwire: {} array items, {} string chars and {} nested values omitted; read the full value with {} …]",
            count(omitted.items),
            count(omitted.chars),
            count(omitted.containers),
            ctx.read_call(0)
        );
        let out = format!("{head}{short}{note}");
        if out.chars().count() <= budget {
            return out;
        }
    }
    // Nothing structural fits (a tiny budget): a plain cut, which at least says so.
    cut_text("", &full, budget, Weight::Balanced, ctx).into_owned()
}

fn elide(
    v: &Json,
    max_items: usize,
    max_str: usize,
    max_depth: usize,
    depth: usize,
    om: &mut Omitted,
) -> Json {
    match v {
        Json::String(s) => {
            let n = s.chars().count();
            if n <= max_str {
                return v.clone();
            }
            let keep_head = max_str / 2;
            let keep_tail = max_str - keep_head;
            let head: String = s.chars().take(keep_head).collect();
            let tail: String = s.chars().skip(n - keep_tail).collect();
            om.chars += n - max_str;
            Json::String(format!("{head}…[{} chars]…{tail}", count(n - max_str)))
        }
        Json::Array(items) if depth >= max_depth && !items.is_empty() => {
            om.containers += 1;
            Json::String(format!("[… array of {} items]", count(items.len())))
        }
        Json::Object(map) if depth >= max_depth && !map.is_empty() => {
            om.containers += 1;
            Json::String(format!("{{… object with {} keys}}", count(map.len())))
        }
        Json::Array(items) => {
            if items.len() <= max_items.max(1) {
                return Json::Array(
                    items
                        .iter()
                        .map(|i| elide(i, max_items, max_str, max_depth, depth + 1, om))
                        .collect(),
                );
            }
            let keep_head = max_items.div_ceil(2);
            let keep_tail = max_items - keep_head;
            let skipped = items.len() - keep_head - keep_tail;
            om.items += skipped;
            let mut out: Vec<Json> = items[..keep_head]
                .iter()
                .map(|i| elide(i, max_items, max_str, max_depth, depth + 1, om))
                .collect();
            out.push(Json::String(format!("… {} more items …", count(skipped))));
            out.extend(
                items[items.len() - keep_tail..]
                    .iter()
                    .map(|i| elide(i, max_items, max_str, max_depth, depth + 1, om)),
            );
            Json::Array(out)
        }
        Json::Object(map) => {
            let out: Map<String, Json> = map
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        elide(v, max_items, max_str, max_depth, depth + 1, om),
                    )
                })
                .collect();
            Json::Object(out)
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CTX: CutContext<'static> = CutContext {
        call_id: "c",
        part: 0,
    };

    #[test]
    fn long_arrays_and_strings_are_elided_and_json_stays_valid() {
        let v = json!({"items": (0..5000).collect::<Vec<_>>(), "log": "x".repeat(50_000)});
        let out = cut_json(Some("5000 items"), &v, 2000, CTX);
        assert!(out.chars().count() <= 2000);
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("5000 items"));
        let parsed: Json = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(parsed["items"][0], json!(0));
        assert_eq!(
            parsed["items"].as_array().unwrap().last(),
            Some(&json!(4999))
        );
        assert!(lines.next().unwrap().contains("JSON shortened"));
    }

    #[test]
    fn fits_means_unchanged() {
        let v = json!({"a": [1, 2, 3]});
        assert_eq!(cut_json(None, &v, 100, CTX), r#"{"a":[1,2,3]}"#);
    }
}
