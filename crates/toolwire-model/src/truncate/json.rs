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

/// `value` cut to `budget` characters of compact JSON by structure, keeping its shape,
/// for a place that must still match the tool's output schema (MCP's
/// `structuredContent`): long arrays keep their first and last items, long strings their
/// head and tail with a count between; every key stays, nothing changes type, no marker
/// goes inside. Returned with the marker that says what was left out and the
/// `read_result` calls that read the whole value and the place cut most (a JSON pointer);
/// `None` when the value fits whole. `budget` covers the value and its marker; when even
/// the tightest cut does not fit (a value of very many keys), that cut is returned.
pub fn cut_value(value: &Json, budget: usize, ctx: CutContext<'_>) -> (Json, Option<String>) {
    if value.to_string().chars().count() <= budget {
        return (value.clone(), None);
    }
    let mut tightest = (Json::Null, None);
    for (max_items, max_str, _) in STEPS {
        let mut cut = Cut::default();
        let short = shorten(value, max_items, max_str, &mut String::new(), &mut cut);
        let marker = cut.marker(ctx);
        let fits = short.to_string().chars().count() + marker.chars().count() <= budget;
        tightest = (short, Some(marker));
        if fits {
            break;
        }
    }
    tightest
}

/// What [`shorten`] left out, and where it left out most.
#[derive(Debug, Default)]
struct Cut {
    items: usize,
    chars: usize,
    /// How much was left out at the place that lost most, and its JSON pointer.
    most: (usize, String),
}

impl Cut {
    fn note(&mut self, amount: usize, at: &str) {
        if amount > self.most.0 {
            self.most = (amount, at.to_owned());
        }
    }

    fn marker(&self, ctx: CutContext<'_>) -> String {
        let id = Json::String(ctx.call_id.to_owned());
        let pointer = Json::String(self.most.1.clone());
        format!(
            "[… JSON shortened by toolwire: {} array items and {} string chars omitted; read the full value with {}, or the place cut most with read_result {{\"callId\":{id},\"part\":{},\"pointer\":{pointer}}} …]",
            count(self.items),
            count(self.chars),
            ctx.read_call(0),
            ctx.part
        )
    }
}

/// `s` cut to `max_str` characters, head and tail kept around a marker naming how many
/// were left out, and that number; `None` when it fits.
fn cut_str(s: &str, max_str: usize) -> Option<(Json, usize)> {
    let n = s.chars().count();
    if n <= max_str {
        return None;
    }
    let keep_head = max_str / 2;
    let head: String = s.chars().take(keep_head).collect();
    let tail: String = s.chars().skip(n - (max_str - keep_head)).collect();
    let left = n - max_str;
    Some((
        Json::String(format!("{head}…[{} chars]…{tail}", count(left))),
        left,
    ))
}

/// `v` with arrays of more than `max_items` items cut to their ends and strings of more
/// than `max_str` characters to their head and tail; `at` is `v`'s JSON pointer.
fn shorten(v: &Json, max_items: usize, max_str: usize, at: &mut String, cut: &mut Cut) -> Json {
    match v {
        Json::String(s) => match cut_str(s, max_str) {
            Some((short, left)) => {
                cut.chars += left;
                cut.note(left, at);
                short
            }
            None => v.clone(),
        },
        Json::Array(items) => {
            let (keep_head, keep_tail) = if items.len() <= max_items {
                (items.len(), 0)
            } else {
                let head = max_items.div_ceil(2);
                (head, max_items - head)
            };
            let skipped = items.len() - keep_head - keep_tail;
            let kept = (0..keep_head).chain(items.len() - keep_tail..items.len());
            let out = kept
                .map(|i| {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    let item = shorten(&items[i], max_items, max_str, at, cut);
                    at.truncate(len);
                    item
                })
                .collect();
            if skipped > 0 {
                cut.items += skipped;
                cut.note(skipped, at);
            }
            Json::Array(out)
        }
        Json::Object(map) => {
            let out: Map<String, Json> = map
                .iter()
                .map(|(k, v)| {
                    let len = at.len();
                    // RFC 6901: `~` and `/` in a key are escaped.
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    let item = shorten(v, max_items, max_str, at, cut);
                    at.truncate(len);
                    (k.clone(), item)
                })
                .collect();
            Json::Object(out)
        }
        _ => v.clone(),
    }
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
        Json::String(s) => match cut_str(s, max_str) {
            Some((short, left)) => {
                om.chars += left;
                short
            }
            None => v.clone(),
        },
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

    /// A value cut for a schema keeps its shape: the same keys, the same types, arrays cut
    /// to their ends with no marker item, a long string's head and tail; the marker names
    /// the pointer of the place cut most.
    #[test]
    fn a_value_is_cut_keeping_its_shape() {
        let v = json!({
            "rows": (0..5000).map(|i| json!({"id": i, "name": format!("row {i}")})).collect::<Vec<_>>(),
            "blob": "QUJD".repeat(20_000),
            "n": 7,
            "a/b": ["x"],
        });
        let (cut, marker) = cut_value(&v, 3_000, CTX);
        let marker = marker.unwrap();
        assert!(cut.to_string().chars().count() + marker.chars().count() <= 3_000);
        let keys = |v: &Json| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&cut), keys(&v));
        assert_eq!(cut["n"], 7);
        assert_eq!(cut["a/b"], json!(["x"]));
        let rows = cut["rows"].as_array().unwrap();
        assert!(rows.len() < 5000 && rows.iter().all(Json::is_object));
        assert_eq!(rows[0], v["rows"][0]);
        assert_eq!(rows.last(), v["rows"].as_array().unwrap().last());
        let blob = cut["blob"].as_str().unwrap();
        assert!(
            blob.starts_with("QUJD") && blob.contains(" chars]…"),
            "{blob:.80}"
        );
        assert!(
            marker.starts_with("[… JSON shortened by toolwire"),
            "{marker}"
        );
        assert!(
            marker.contains(r#"read_result {"callId":"c","part":0,"pointer":"/blob"}"#),
            "{marker}"
        );
        // A value that fits is the value, with no marker.
        assert_eq!(cut_value(&v["a/b"], 100, CTX), (json!(["x"]), None));
    }

    #[test]
    fn fits_means_unchanged() {
        let v = json!({"a": [1, 2, 3]});
        assert_eq!(cut_json(None, &v, 100, CTX), r#"{"a":[1,2,3]}"#);
    }
}
