//! Paging through a stored result in the units its truncation markers use, so the model
//! can follow a marker's `read_result {"callId", "part", "offset"}` to exactly the rest.
//!
//! Units: chars of the body for text, file_content and JSON; rows, entries and diff lines
//! for tables, listings and diffs.

use toolwire_core::ToolResult;

use crate::render::{Shape, shape};
use crate::truncate::count;

/// Default characters returned by one read.
pub const DEFAULT_READ_CHARS: usize = 20_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("part {part} is out of range: the result has {len} output values (parts 0–{})", len.saturating_sub(1))]
    NoSuchPart { part: usize, len: usize },
    #[error("part {part} is {what}, which has no text to read")]
    Media { part: usize, what: String },
    #[error("offset {offset} is past the end of part {part} ({len} {unit})")]
    PastEnd {
        part: usize,
        offset: usize,
        len: usize,
        unit: &'static str,
    },
}

/// Up to `limit` chars of output value `part`, starting at `offset`, ending with a note of
/// what remains and the call that reads on.
pub fn read_part(
    result: &ToolResult,
    part: usize,
    offset: usize,
    limit: usize,
) -> Result<String, ReadError> {
    let value = result.output.get(part).ok_or(ReadError::NoSuchPart {
        part,
        len: result.output.len(),
    })?;
    let limit = limit.max(1);
    let next = |offset: usize| {
        let id = serde_json::Value::String(result.call_id.clone());
        format!("read_result {{\"callId\":{id},\"part\":{part},\"offset\":{offset}}}")
    };
    let shape = shape(value, &result.tool_name).unwrap_or_else(|raw| raw);
    match shape {
        Shape::Text { prefix, body, .. } => Ok(format!(
            "{prefix}{}",
            chars_page(body, part, offset, limit, &next)?
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
    let page: String = text.chars().skip(offset).take(limit).collect();
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
        let first = read_part(&r, 0, 0, 50).unwrap();
        assert!(first.starts_with(&text[..50]));
        assert!(first.contains(
            "continue with read_result {\"callId\":\"call_1\",\"part\":0,\"offset\":50}"
        ));
        let second = read_part(&r, 0, 50, 50).unwrap();
        assert!(second.starts_with(&text[50..100]));
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
}
