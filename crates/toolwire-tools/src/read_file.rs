//! `read_file`: a text file of the workspace as a `file_content` value, optionally a range
//! of its lines.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value as Json;
use toolwire_core::Value;

use crate::language::language_for;
use crate::read_regular_file;
use crate::workspace::Workspace;
use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

/// Lines returned when the call sets no `limit`: enough for most source files, small
/// enough that one call cannot flood a context window.
pub(crate) const DEFAULT_LINE_LIMIT: u64 = 2000;
/// Files above this are refused rather than loaded whole to pick a few lines.
pub(crate) const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFileArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// First line to return, counting from 1. Default 1.
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most lines to return. Default 2000.
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub limit: Option<u64>,
}

/// The `read_file` tool over `workspace`.
pub fn read_file(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "read_file",
        "Reads a UTF-8 text file of the workspace. Returns its content (or the lines \
         `offset`..`offset+limit`, 1-based, default the first 2000) with its size in bytes. \
         Binary files are refused; use view_image for images.",
        move |args: ReadFileArgs, _ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move { read(&workspace, args).await }
        },
    )
    .with_schema(|s| {
        s.annotations = Some(toolwire_tool::ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
        s.examples = vec![toolwire_tool::ToolExample {
            input: serde_json::json!({"path": "src/main.rs", "offset": 1, "limit": 100}),
            output: None,
            description: Some("The first 100 lines of src/main.rs".into()),
        }];
    })
}

async fn read(workspace: &Workspace, args: ReadFileArgs) -> Result<Value, ToolError> {
    let resolved = workspace.resolve(&args.path)?;
    let display = resolved.display;
    let bytes = read_regular_file(&resolved.path, &display, MAX_FILE_BYTES).await?;
    let size = bytes.len() as u64;
    let text = decode_text(&display, bytes)?;

    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LINE_LIMIT).max(1);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len() as u64;
    if offset > 1 && offset > total {
        return Err(ToolError::with_code(
            "offset_out_of_range",
            format!("offset {offset} is past the end of `{display}`, which has {total} lines"),
        ));
    }
    let start = offset.saturating_sub(1);
    let end = start.saturating_add(limit).min(total);
    let whole = start == 0 && end == total;
    let summary = if whole {
        format!("{total} lines, {size} bytes")
    } else if end < total {
        format!(
            "lines {offset}-{end} of {total}; read on with offset {}",
            end + 1
        )
    } else {
        format!("lines {offset}-{end} of {total}")
    };
    let content = if whole {
        text
    } else {
        lines[start as usize..end as usize].concat()
    };

    let mut value = Value::file_content(&display, content).summary(summary);
    // `size` is the file's size, also when only some of its lines are returned.
    if let Json::Object(data) = &mut value.data {
        data.insert("size".into(), Json::from(size));
    }
    if let Some(lang) = language_for(&display) {
        value = value.language(lang);
    }
    Ok(value)
}

/// The file as text, or an error that says what the bytes are and which tool fits.
fn decode_text(display: &str, bytes: Vec<u8>) -> Result<String, ToolError> {
    let sniffed = infer::get(&bytes);
    if let Some(kind) = sniffed
        && kind.mime_type().starts_with("image/")
    {
        return Err(ToolError::with_code(
            "binary_file",
            format!(
                "`{display}` is an image ({}); use view_image to see it",
                kind.mime_type()
            ),
        ));
    }
    let detected = sniffed
        .map(|k| format!(" (detected {})", k.mime_type()))
        .unwrap_or_default();
    let len = bytes.len();
    let binary = |what: &str| {
        ToolError::with_code(
            "binary_file",
            format!(
                "`{display}` is {what}{detected}, {len} bytes; read_file reads UTF-8 text only \
                 (use run with a tool such as `xxd` or `file` to inspect it)"
            ),
        )
    };
    // NUL bytes are valid UTF-8 but mark binary formats; sniffing the head is what git and
    // grep do.
    if bytes[..len.min(8192)].contains(&0) {
        return Err(binary("a binary file"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        binary(&format!("not valid UTF-8 (first bad byte at offset {at})"))
    })
}
