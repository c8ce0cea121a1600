//! `edit_file`: replaces an exact string in a workspace file, returning the change as a
//! `diff`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::Value;

use crate::workspace::{Workspace, replace_file};
use crate::write_file::change_summary;
use crate::{io_error, read_regular_file};
use toolwire_tool::ToolContext;
use toolwire_tool::{ApprovalPolicy, ToolAnnotations};
use toolwire_tool::{Tool, ToolError, tool_fn};

const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditFileArgs {
    /// Path of an existing file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace, including whitespace and indentation. It must occur
    /// exactly once unless `replace_all` is set.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one. Default false.
    #[serde(default)]
    pub replace_all: bool,
}

/// The `edit_file` tool over `workspace`. Asks for approval by default: it changes files.
pub fn edit_file(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "edit_file",
        "Replaces `old_string` with `new_string` in an existing workspace file. \
         `old_string` must match the file exactly (whitespace included) and occur exactly \
         once, or set `replace_all` to replace every occurrence. Returns the change as a \
         diff. Read the file first to copy the text exactly.",
        move |args: EditFileArgs, _ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move { edit(&workspace, args).await }
        },
    )
    .with_schema(|s| {
        s.approval = ApprovalPolicy::Always;
        s.annotations = Some(ToolAnnotations {
            destructive_hint: Some(true),
            ..Default::default()
        });
    })
}

async fn edit(workspace: &Workspace, args: EditFileArgs) -> Result<Value, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::InvalidInput(
            "old_string is empty; to create or overwrite a file use write_file".into(),
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::InvalidInput(
            "old_string and new_string are identical; there is nothing to change".into(),
        ));
    }
    let resolved = workspace.resolve(&args.path)?;
    let display = resolved.display;
    let bytes = read_regular_file(&resolved.path, &display, MAX_FILE_BYTES).await?;
    let original = String::from_utf8(bytes).map_err(|_| {
        ToolError::with_code(
            "binary_file",
            format!("`{display}` is not UTF-8 text; edit_file edits text files only"),
        )
    })?;
    let matches = original.matches(args.old_string.as_str()).count();
    match matches {
        0 => {
            return Err(ToolError::with_code(
                "no_match",
                format!(
                    "old_string was not found in `{display}`; read the file and copy the text \
                     exactly, including whitespace and indentation"
                ),
            ));
        }
        1 => {}
        n if !args.replace_all => {
            return Err(ToolError::with_code(
                "ambiguous_match",
                format!(
                    "old_string occurs {n} times in `{display}`; include more surrounding \
                     text to make it unique, or set replace_all to replace all {n}"
                ),
            ));
        }
        _ => {}
    }
    let modified = original.replace(args.old_string.as_str(), &args.new_string);
    replace_file(&resolved.path, modified.as_bytes())
        .await
        .map_err(|e| io_error(&display, &e))?;
    let noun = if matches == 1 {
        "1 occurrence".to_owned()
    } else {
        format!("{matches} occurrences")
    };
    let summary = format!(
        "{} ({noun} replaced)",
        change_summary("edited", &display, &original, &modified)
    );
    Ok(Value::diff(display, Some(original), modified).summary(summary))
}
