//! Paging through a stored result in the units its truncation markers use, so the model
//! can follow a marker's `read_result {"callId", "part", "offset"}` to exactly the rest.
//!
//! Units: chars of the body for text, file_content and JSON; rows, entries and diff lines
//! for tables, listings and diffs.
//!
//! Beyond paging, a read may point into a JSON value (RFC 6901, [`ReadRequest::pointer`])
//! and search a part with a regular expression ([`ReadRequest::pattern`]): the lines (or
//! rows, or JSON leaves) that match, each with the offset (or pointer) that reads it.

use std::borrow::Cow;

use toolwire_core::ToolResult;

use crate::render::{Shape, shape};
use crate::truncate::count;

/// Default characters returned by one read.
pub const DEFAULT_READ_CHARS: usize = 20_000;

/// Why a `read_result` request cannot be served; the message tells the model how to ask again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The result has no output value of that index.
    #[error("part {part} is out of range: the result has {len} output values (parts 0–{})", len.saturating_sub(1))]
    NoSuchPart {
        /// The index asked for.
        part: usize,
        /// How many output values the result has.
        len: usize,
    },
    /// The part is media (an image, a file), which has no text.
    #[error("part {part} is {what}, which has no text to read")]
    Media {
        /// The index asked for.
        part: usize,
        /// What kind of media it is.
        what: String,
    },
    /// The offset lies beyond the part's end.
    #[error("offset {offset} is past the end of part {part} ({len} {unit})")]
    PastEnd {
        /// The index asked for.
        part: usize,
        /// The offset asked for.
        offset: usize,
        /// The part's length.
        len: usize,
        /// What the length counts: chars, lines, rows.
        unit: &'static str,
    },
    /// The pattern does not compile, or is too long or too costly.
    #[error("pattern {pattern:?} is not a regular expression this reader takes: {why}")]
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// Why it was refused.
        why: String,
    },
    /// The pointer is not an RFC 6901 JSON pointer.
    #[error(
        "pointer {pointer:?} is not a JSON pointer: it must be empty or start with \"/\" (RFC 6901)"
    )]
    BadPointer {
        /// The pointer as given.
        pointer: String,
    },
    /// A pointer was given for a part that is not JSON.
    #[error("part {part} is {what}, not JSON, so a pointer cannot go into it")]
    NotJson {
        /// The index asked for.
        part: usize,
        /// What the part is instead.
        what: &'static str,
    },
    /// The pointer leads nowhere in the part.
    #[error("nothing at pointer {pointer:?} in part {part}; {hint}")]
    NoValueAt {
        /// The index asked for.
        part: usize,
        /// The pointer as given.
        pointer: String,
        /// Where the pointer stopped matching, and what is there.
        hint: String,
    },
}

/// The longest pattern a read takes, and the most memory its compiled form may use: the
/// regex engine runs in linear time, these keep one request's compile cost bounded.
const MAX_PATTERN_CHARS: usize = 1_000;
const MAX_PATTERN_BYTES: usize = 1 << 20;

/// A matching line is shown up to this many chars.
const MAX_MATCH_CHARS: usize = 300;

/// What one read asks for: a page of `part` from `offset`, at most `limit` chars; within
/// the value at `pointer`, if given; only what matches `pattern`, if given (then `offset`
/// counts lines, rows or JSON leaves searched, and the page lists the matches).
#[derive(Debug, Clone, Default)]
pub struct ReadRequest<'a> {
    /// Which output value to read.
    pub part: usize,
    /// Where to start: chars, or with `pattern` lines, rows or leaves searched.
    pub offset: usize,
    /// At most this many chars.
    pub limit: usize,
    /// A regular expression; only what matches is listed.
    pub pattern: Option<&'a str>,
    /// A JSON pointer into the part; the read covers what it points at.
    pub pointer: Option<&'a str>,
}

/// Up to `limit` chars of output value `part`, starting at `offset`, ending with a note of
/// what remains and the call that reads on.
pub fn read_part(
    result: &ToolResult,
    part: usize,
    offset: usize,
    limit: usize,
) -> Result<String, ReadError> {
    read(
        result,
        &ReadRequest {
            part,
            offset,
            limit,
            ..ReadRequest::default()
        },
    )
}

/// What `request` asks of `result`: a page, a page of the value at a pointer, or the
/// matches of a pattern; each ends with a note of what remains and the call that reads on.
pub fn read(result: &ToolResult, request: &ReadRequest<'_>) -> Result<String, ReadError> {
    let part = request.part;
    let value = result.output.get(part).ok_or(ReadError::NoSuchPart {
        part,
        len: result.output.len(),
    })?;
    let limit = request.limit.max(1);
    let pattern = request.pattern.map(compile).transpose()?;
    // The call that reads on: the same request from another offset.
    let next = |offset: usize| {
        let mut call = serde_json::json!({"callId": result.call_id, "part": part});
        if let Some(map) = call.as_object_mut() {
            if let Some(pointer) = request.pointer {
                map.insert("pointer".into(), pointer.into());
            }
            if let Some(pattern) = request.pattern {
                map.insert("pattern".into(), pattern.into());
            }
            map.insert("offset".into(), offset.into());
        }
        format!("read_result {call}")
    };
    let shape = shape(value, &result.tool_name).unwrap_or_else(|raw| raw);
    if let Some(pointer) = request.pointer {
        let root = json_of(&shape).ok_or(ReadError::NotJson {
            part,
            what: shape_name(&shape),
        })?;
        let found = point(&root, pointer, part)?;
        if let Some(pattern) = &pattern {
            return Ok(search_json(
                found,
                pointer,
                pattern,
                request.offset,
                limit,
                &next,
            ));
        }
        return match found {
            // A string is read as the text it is, not as a quoted JSON string.
            serde_json::Value::String(text) => chars_page(text, part, request.offset, limit, &next),
            other => chars_page(&other.to_string(), part, request.offset, limit, &next),
        };
    }
    if let Some(pattern) = &pattern {
        return search(&shape, part, pattern, request.offset, limit, &next);
    }
    let offset = request.offset;
    match shape {
        Shape::Text { prefix, body, .. } => Ok(format!(
            "{prefix}{}",
            chars_page(&body, part, offset, limit, &next)?
        )),
        Shape::Json { value, .. } => chars_page(&value.to_string(), part, offset, limit, &next),
        Shape::Diff(diff) => {
            let lines: Vec<&str> = diff.lines().collect();
            items_page(&[], &lines, part, offset, limit, "lines", &next)
        }
        Shape::Lines {
            header,
            items,
            unit,
            ..
        } => {
            let items: Vec<&str> = items.iter().map(String::as_str).collect();
            items_page(&header, &items, part, offset, limit, unit, &next)
        }
        Shape::Line(line) => chars_page(&line, part, offset, limit, &next),
        Shape::Media(m) => Err(ReadError::Media {
            part,
            what: format!("{} ({})", m.class.label(), m.mime),
        }),
    }
}

fn compile(pattern: &str) -> Result<regex::Regex, ReadError> {
    let bad = |why: String| ReadError::BadPattern {
        pattern: pattern.chars().take(80).collect(),
        why,
    };
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(bad(format!("longer than {MAX_PATTERN_CHARS} chars")));
    }
    regex::RegexBuilder::new(pattern)
        .size_limit(MAX_PATTERN_BYTES)
        .build()
        .map_err(|e| bad(e.to_string()))
}

fn shape_name(shape: &Shape<'_>) -> &'static str {
    match shape {
        Shape::Text { .. } | Shape::Line(_) => "text",
        Shape::Lines { .. } => "a listing",
        Shape::Diff(_) => "a diff",
        Shape::Json { .. } => "JSON",
        Shape::Media(_) => "media",
    }
}

/// The JSON a part holds: a structured value, or text that parses as JSON (servers often
/// send JSON as text).
fn json_of<'a>(shape: &Shape<'a>) -> Option<Cow<'a, serde_json::Value>> {
    match shape {
        Shape::Json { value, .. } => Some(Cow::Borrowed(value)),
        Shape::Text { body, .. } => serde_json::from_str(body).ok().map(Cow::Owned),
        _ => None,
    }
}

/// The value at `pointer`, or an error that says how far it got and what is there.
fn point<'v>(
    root: &'v serde_json::Value,
    pointer: &str,
    part: usize,
) -> Result<&'v serde_json::Value, ReadError> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(ReadError::BadPointer {
            pointer: pointer.chars().take(200).collect(),
        });
    }
    if let Some(found) = root.pointer(pointer) {
        return Ok(found);
    }
    // The longest prefix that resolves, and what it holds.
    let mut known = "";
    for (at, _) in pointer.match_indices('/').skip(1) {
        if root.pointer(&pointer[..at]).is_some() {
            known = &pointer[..at];
        }
    }
    let hint = match root.pointer(known) {
        Some(serde_json::Value::Object(map)) => {
            let keys: Vec<&str> = map.keys().take(20).map(String::as_str).collect();
            let more = map.len().saturating_sub(keys.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{:?} has keys {}{more}", known, keys.join(", "))
        }
        Some(serde_json::Value::Array(items)) => {
            format!(
                "{known:?} is an array of {} items (indexes 0–{})",
                items.len(),
                items.len().saturating_sub(1)
            )
        }
        _ => format!("{known:?} holds a value with no members"),
    };
    Err(ReadError::NoValueAt {
        part,
        pointer: pointer.chars().take(200).collect(),
        hint,
    })
}

/// `line` shortened to [`MAX_MATCH_CHARS`].
fn clip(line: &str) -> String {
    if line.chars().count() <= MAX_MATCH_CHARS {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(MAX_MATCH_CHARS).collect();
    out.push('…');
    out
}

/// The matches among `items` (from item `offset` on), each `label: item`, as many as fit
/// `limit`, with a note of what is left. `unit` names what `offset` counts.
fn list_matches<'i>(
    items: impl Iterator<Item = (String, Cow<'i, str>)>,
    pattern: &regex::Regex,
    offset: usize,
    limit: usize,
    unit: &str,
    next: &dyn Fn(usize) -> String,
) -> String {
    let mut out = String::new();
    let mut found = 0usize;
    let mut searched = offset;
    for (index, (label, item)) in items.enumerate().skip(offset) {
        if !pattern.is_match(&item) {
            searched = index + 1;
            continue;
        }
        let line = if label.is_empty() {
            format!("{}\n", clip(&item))
        } else {
            format!("{label}: {}\n", clip(&item))
        };
        if found > 0 && out.chars().count() + line.chars().count() > limit {
            out.push_str(&format!(
                "[{found} matches shown, searched {unit} {}–{}; more may follow: continue with {}]",
                count(offset),
                count(index),
                next(index)
            ));
            return out;
        }
        out.push_str(&line);
        found += 1;
        searched = index + 1;
    }
    out.push_str(&format!(
        "[{found} matches for /{}/ in {unit} {}–{}; the end]",
        pattern.as_str(),
        count(offset),
        count(searched)
    ));
    out
}

/// The lines, rows or entries of a part that match `pattern`.
fn search(
    shape: &Shape<'_>,
    part: usize,
    pattern: &regex::Regex,
    offset: usize,
    limit: usize,
    next: &dyn Fn(usize) -> String,
) -> Result<String, ReadError> {
    let text = match shape {
        Shape::Text { body, .. } => Cow::Borrowed(&**body),
        Shape::Line(line) => Cow::Borrowed(line.as_str()),
        Shape::Diff(diff) => Cow::Borrowed(diff.as_str()),
        Shape::Lines { items, .. } => {
            let rows = items
                .iter()
                .enumerate()
                .map(|(i, item)| (format!("row {i}"), Cow::Borrowed(item.as_str())));
            return Ok(list_matches(rows, pattern, offset, limit, "rows", next));
        }
        Shape::Json { value, .. } => {
            return Ok(search_json(value, "", pattern, offset, limit, next));
        }
        Shape::Media(m) => {
            return Err(ReadError::Media {
                part,
                what: format!("{} ({})", m.class.label(), m.mime),
            });
        }
    };
    // Each line labelled with the char offset a plain read starts it at.
    let mut at = 0usize;
    let lines = text.split_inclusive('\n').map(|line| {
        let label = format!("offset {at}");
        at += line.chars().count();
        (label, Cow::Borrowed(line.trim_end_matches(['\n', '\r'])))
    });
    Ok(list_matches(lines, pattern, offset, limit, "lines", next))
}

/// The leaves of `value` (at `base`) whose pointer or value matches `pattern`, each as
/// `pointer: value`, the pointer ready for a read.
fn search_json(
    value: &serde_json::Value,
    base: &str,
    pattern: &regex::Regex,
    offset: usize,
    limit: usize,
    next: &dyn Fn(usize) -> String,
) -> String {
    let mut leaves = Vec::new();
    collect_leaves(value, base.to_owned(), &mut leaves);
    // Each leaf a line `pointer = value`, so a pattern may match either.
    let items = leaves.into_iter().map(|(pointer, leaf)| {
        let line = match leaf {
            serde_json::Value::String(s) => format!("{pointer} = {s}"),
            other => format!("{pointer} = {other}"),
        };
        (String::new(), Cow::Owned(line))
    });
    list_matches(items, pattern, offset, limit, "JSON leaves", next)
}

/// Every scalar (and empty container) of `value`, with its JSON pointer, in document
/// order; iterative, so a deeply nested value cannot overflow the stack.
fn collect_leaves<'v>(
    value: &'v serde_json::Value,
    base: String,
    out: &mut Vec<(String, &'v serde_json::Value)>,
) {
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    let mut stack = vec![(base, value)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            serde_json::Value::Object(map) if !map.is_empty() => {
                for (key, child) in map.iter().rev() {
                    stack.push((format!("{pointer}/{}", escape(key)), child));
                }
            }
            serde_json::Value::Array(items) if !items.is_empty() => {
                for (i, child) in items.iter().enumerate().rev() {
                    stack.push((format!("{pointer}/{i}"), child));
                }
            }
            leaf => out.push((pointer, leaf)),
        }
    }
}

fn chars_page(
    text: &str,
    part: usize,
    offset: usize,
    limit: usize,
    next: &dyn Fn(usize) -> String,
) -> Result<String, ReadError> {
    let total = text.chars().count();
    if offset > total || (offset == total && total > 0) {
        return Err(ReadError::PastEnd {
            part,
            offset,
            len: total,
            unit: "chars",
        });
    }
    let mut page: String = text.chars().skip(offset).take(limit).collect();
    let taken = page.chars().count();
    // A page that stops short of the end stops after a whole line, as the first result's
    // cut does, unless that would leave it less than half full (a line longer than half
    // a page is cut where the page ends): the next page starts on a line of its own.
    if offset + taken < total
        && let Some(newline) = page.rfind('\n')
        && page[..newline].chars().count() + 1 >= limit.div_ceil(2)
    {
        page.truncate(newline + 1);
    }
    let end = offset + page.chars().count();
    let mut out = page;
    if end < total {
        out.push_str(&format!(
            "\n[chars {}–{} of {}; {} more; continue with {}]",
            count(offset),
            count(end),
            count(total),
            count(total - end),
            next(end)
        ));
    }
    Ok(out)
}

fn items_page(
    header: &[String],
    items: &[&str],
    part: usize,
    offset: usize,
    limit: usize,
    unit: &'static str,
    next: &dyn Fn(usize) -> String,
) -> Result<String, ReadError> {
    if offset > items.len() || (offset == items.len() && !items.is_empty()) {
        return Err(ReadError::PastEnd {
            part,
            offset,
            len: items.len(),
            unit,
        });
    }
    let mut out = String::new();
    for h in header {
        out.push_str(h);
        out.push('\n');
    }
    let mut end = offset;
    // At least one item, so a read always advances.
    while end < items.len()
        && (end == offset || out.chars().count() + items[end].chars().count() < limit)
    {
        out.push_str(items[end]);
        out.push('\n');
        end += 1;
    }
    if end < items.len() {
        out.push_str(&format!(
            "[{unit} {}–{} of {}; continue with {}]",
            count(offset),
            count(end),
            count(items.len()),
            next(end)
        ));
    } else if offset > 0 {
        out.push_str(&format!(
            "[{unit} {}–{} of {}; the end]",
            count(offset),
            count(end),
            count(items.len())
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire_core::{CallRef, Source, Value};

    fn result(values: Vec<Value>) -> ToolResult {
        ToolResult::success(CallRef::new("call_1", "run"), values)
    }

    #[test]
    fn text_pages_follow_on_exactly() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let r = result(vec![Value::text(text.clone())]);
        // 50 chars end inside "line 7\n" (chars 49-55): the page stops after "line 6".
        let first = read_part(&r, 0, 0, 50).unwrap();
        assert!(
            first.starts_with(&format!("{}\n[chars", &text[..49])),
            "{first}"
        );
        assert!(first.contains(
            "continue with read_result {\"callId\":\"call_1\",\"part\":0,\"offset\":49}"
        ));
        let second = read_part(&r, 0, 49, 50).unwrap();
        assert!(second.starts_with("line 7\n"), "{second}");
        // A line longer than half a page is cut where the page ends.
        let long = format!("short\n{}\nend\n", "x".repeat(80));
        let r2 = result(vec![Value::text(long.clone())]);
        let page = read_part(&r2, 0, 0, 50).unwrap();
        assert!(
            page.starts_with(&format!("{}\n[chars", &long[..50])),
            "{page}"
        );
        // Followed page by page, the pages make the text again.
        let (mut joined, mut offset) = (String::new(), 0);
        loop {
            let page = read_part(&r, 0, offset, 37).unwrap();
            let Some(note) = page.find("\n[chars ") else {
                joined.push_str(&page);
                break;
            };
            assert!(page[..note].ends_with('\n'), "{page}");
            joined.push_str(&page[..note]);
            offset = joined.chars().count();
        }
        assert_eq!(joined, text);
        let last = read_part(&r, 0, text.len() - 5, 50).unwrap();
        assert_eq!(last, &text[text.len() - 5..]);
        assert!(matches!(
            read_part(&r, 0, text.len() + 1, 5),
            Err(ReadError::PastEnd { .. })
        ));
    }

    #[test]
    fn table_pages_are_rows_with_the_header() {
        let rows: Vec<_> = (0..1000).map(|i| json!({"n": i})).collect();
        let r = result(vec![Value::table(["n"], rows)]);
        let page = read_part(&r, 0, 500, 40).unwrap();
        let lines: Vec<&str> = page.lines().collect();
        assert_eq!(lines[0], "n");
        assert_eq!(lines[1], "500");
        assert!(page.contains("\"offset\":"));
    }

    #[test]
    fn bad_parts_and_media_say_why() {
        let r = result(vec![Value::image(Source::base64("AAAA"), "image/png")]);
        assert_eq!(
            read_part(&r, 3, 0, 10).unwrap_err().to_string(),
            "part 3 is out of range: the result has 1 output values (parts 0–0)"
        );
        assert!(
            read_part(&r, 0, 0, 10)
                .unwrap_err()
                .to_string()
                .contains("image (image/png)")
        );
    }

    #[test]
    fn utf8_is_never_split() {
        let r = result(vec![Value::text("🦀".repeat(30))]);
        let page = read_part(&r, 0, 7, 3).unwrap();
        assert!(page.starts_with("🦀🦀🦀\n[chars 7–10 of 30"));
    }

    fn find(
        r: &ToolResult,
        pattern: Option<&str>,
        pointer: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<String, ReadError> {
        read(
            r,
            &ReadRequest {
                part: 0,
                offset,
                limit,
                pattern,
                pointer,
            },
        )
    }

    /// A pattern finds the lines that match, each with the offset a plain read starts it
    /// at; capped at the limit, with the call that searches on.
    #[test]
    fn a_pattern_lists_matching_lines_with_their_offsets() {
        let text: String = (0..10_000)
            .map(|i| {
                if i % 1000 == 7 {
                    format!("ERROR {i}\n")
                } else {
                    format!("ok {i}\n")
                }
            })
            .collect();
        let r = result(vec![Value::text(text.clone())]);
        let page = find(&r, Some("^ERROR"), None, 0, 20_000).unwrap();
        let lines: Vec<&str> = page.lines().collect();
        assert_eq!(lines.len(), 11, "{page}");
        let offset: usize = lines[1]
            .strip_prefix("offset ")
            .and_then(|l| l.split(':').next())
            .unwrap()
            .parse()
            .unwrap();
        // The offset reads exactly that line.
        assert!(
            read_part(&r, 0, offset, 10)
                .unwrap()
                .starts_with("ERROR 1007")
        );
        assert!(lines[10].starts_with("[10 matches for /^ERROR/"), "{page}");

        // A small limit shows what fits and says how to go on.
        let page = find(&r, Some("ERROR"), None, 0, 60).unwrap();
        assert!(page.contains("more may follow: continue with read_result {\"callId\":\"call_1\",\"part\":0,\"pattern\":\"ERROR\",\"offset\":"), "{page}");
        let on: usize = page
            .rsplit("\"offset\":")
            .next()
            .unwrap()
            .trim_end_matches("}]")
            .parse()
            .unwrap();
        let rest = find(&r, Some("ERROR"), None, on, 20_000).unwrap();
        assert!(
            !rest.contains("ERROR 7\n") && rest.contains("ERROR 9007"),
            "{rest}"
        );

        let none = find(&r, Some("panic"), None, 0, 1000).unwrap();
        assert!(none.starts_with("[0 matches for /panic/"), "{none}");
    }

    #[test]
    fn a_pointer_reads_one_value_and_says_what_is_there_when_wrong() {
        let value = json!({"items": [{"name": "a"}, {"name": "b", "tags": ["x/y"]}], "total": 2});
        let r = result(vec![Value::structured(value.clone())]);
        assert_eq!(find(&r, None, Some("/items/1/name"), 0, 100).unwrap(), "b");
        assert_eq!(find(&r, None, Some("/total"), 0, 100).unwrap(), "2");
        assert_eq!(
            find(&r, None, Some(""), 0, 10_000).unwrap(),
            value.to_string()
        );
        let err = find(&r, None, Some("/items/5/name"), 0, 100)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"/items\" is an array of 2 items"), "{err}");
        let err = find(&r, None, Some("/itemz"), 0, 100)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"\" has keys items, total"), "{err}");
        let err = find(&r, None, Some("items"), 0, 100).unwrap_err();
        assert!(matches!(err, ReadError::BadPointer { .. }), "{err}");

        // A pattern under a pointer lists leaves with pointers a read takes (~1 for '/').
        let leaves = find(&r, Some("x/y"), Some("/items"), 0, 1000).unwrap();
        assert!(leaves.starts_with("/items/1/tags/0 = x/y\n"), "{leaves}");
        let keyed = result(vec![Value::structured(json!({"a/b": {"c~d": 1}}))]);
        let leaves = find(&keyed, Some("="), None, 0, 1000).unwrap();
        assert!(leaves.starts_with("/a~1b/c~0d = 1\n"), "{leaves}");
        assert_eq!(find(&keyed, None, Some("/a~1b/c~0d"), 0, 10).unwrap(), "1");

        // JSON sent as text is JSON too; plain text is not.
        let texty = result(vec![Value::text(value.to_string())]);
        assert_eq!(
            find(&texty, None, Some("/items/0/name"), 0, 100).unwrap(),
            "a"
        );
        let plain = result(vec![Value::text("not json")]);
        let err = find(&plain, None, Some("/a"), 0, 100)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "part 0 is text, not JSON, so a pointer cannot go into it"
        );
    }

    #[test]
    fn a_bad_or_huge_pattern_is_a_clear_error() {
        let r = result(vec![Value::text("abc")]);
        let err = find(&r, Some("(unclosed"), None, 0, 100)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("pattern \"(unclosed\" is not a regular expression"),
            "{err}"
        );
        let long = "a".repeat(MAX_PATTERN_CHARS + 1);
        assert!(matches!(
            find(&r, Some(&long), None, 0, 100),
            Err(ReadError::BadPattern { .. })
        ));
        // Compiles past the size limit: refused, not built.
        let err = find(&r, Some("\\w{1000}\\w{1000}\\w{1000}"), None, 0, 100).unwrap_err();
        assert!(matches!(err, ReadError::BadPattern { .. }), "{err}");
        // Nested deeper than serde_json parses (128) is still searched, without recursion.
        let mut deep = json!(1);
        for _ in 0..300 {
            deep = json!([deep]);
        }
        let nested = result(vec![Value::structured(deep)]);
        let page = find(&nested, Some("= 1$"), None, 0, 100_000).unwrap();
        assert!(page.contains("1 matches"), "{}", &page[page.len() - 80..]);
    }
}
