//! `render_json`: what `toolwire render FILE` calls on any ToolResult or Value JSON.

use serde::Deserialize;
use serde_json::Value as Json;
use toolwire_core::{ToolResult, Value};

use crate::options::TermOptions;
use crate::{Render, join};

/// Why a JSON document could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// The document is neither a result, a value, nor an array of them.
    #[error(
        "expected a ToolResult ({{callId, toolName, status, output, ...}}), a Value ({{kind, data, ...}}) \
         or an array of them, found {found}"
    )]
    NotAResult {
        /// The JSON type found instead, e.g. `a number`.
        found: &'static str,
    },
    /// It looks like a result but does not deserialize as one.
    #[error("not a valid ToolResult: {0}")]
    ToolResult(#[source] serde_json::Error),
    /// It looks like a value but does not deserialize as one.
    #[error("not a valid Value: {0}")]
    Value(#[source] serde_json::Error),
    /// One item of an array could not be rendered.
    #[error("item {index}: {source}")]
    Item {
        /// The item's index in the array.
        index: usize,
        /// Why it could not be rendered.
        #[source]
        source: Box<RenderError>,
    },
}

fn type_name(doc: &Json) -> &'static str {
    match doc {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object without `kind` or `status`",
    }
}

enum Doc {
    Result(Box<ToolResult>),
    Value(Box<Value>),
}

fn classify(doc: &Json) -> Result<Doc, RenderError> {
    let Json::Object(map) = doc else {
        return Err(RenderError::NotAResult {
            found: type_name(doc),
        });
    };
    if map.contains_key("kind") {
        return Value::deserialize(doc)
            .map(|v| Doc::Value(Box::new(v)))
            .map_err(RenderError::Value);
    }
    if ["status", "callId", "toolName"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        return ToolResult::deserialize(doc)
            .map(|r| Doc::Result(Box::new(r)))
            .map_err(RenderError::ToolResult);
    }
    Err(RenderError::NotAResult {
        found: type_name(doc),
    })
}

/// Renders a ToolResult, a Value, or an array of either, given as JSON. Values that are
/// well-formed JSON but off-shape for their kind still render, with a note; only a
/// document that is neither is an error.
pub fn render_json(doc: &Json, opts: &TermOptions) -> Result<String, RenderError> {
    let docs = match doc {
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                classify(item).map_err(|e| RenderError::Item {
                    index,
                    source: Box::new(e),
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        single => vec![classify(single)?],
    };
    let mut lines = Vec::new();
    for d in &docs {
        let mut block = Vec::new();
        match d {
            Doc::Result(r) => r.render_lines(opts, &mut block),
            Doc::Value(v) => v.render_lines(opts, &mut block),
        }
        if block.is_empty() {
            continue;
        }
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.append(&mut block);
    }
    Ok(join(lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_results_values_and_arrays() {
        let opts = TermOptions::plain(40);
        let v = json!({"kind": "text", "data": {"content": "hi"}});
        assert_eq!(render_json(&v, &opts).unwrap(), "hi\n");
        let r = json!({"callId": "c", "toolName": "t", "status": "success", "output": [v]});
        assert_eq!(render_json(&r, &opts).unwrap(), "✓ t · success\nhi\n");
        let both = json!([v, v]);
        assert_eq!(render_json(&both, &opts).unwrap(), "hi\n\nhi\n");
    }

    #[test]
    fn bad_documents_say_what_was_expected() {
        let opts = TermOptions::plain(40);
        let e = render_json(&json!("hello"), &opts).unwrap_err().to_string();
        assert!(
            e.contains("expected a ToolResult") && e.ends_with("found a string"),
            "{e}"
        );
        let e = render_json(&json!({"status": "weird"}), &opts)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not a valid ToolResult"), "{e}");
        let e = render_json(&json!([{"kind": "text", "data": 1}, 3]), &opts)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("item 1: expected"), "{e}");
    }
}
