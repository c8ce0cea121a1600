//! `write_file`: creates or overwrites a workspace file, returning the change as a `diff`.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use similar::{ChangeTag, TextDiff};
use toolwire_core::Value;

use crate::workspace::{Resolved, Workspace, replace_file};
use crate::{io_error, not_a_file};
use toolwire_tool::ToolContext;
use toolwire_tool::{ApprovalPolicy, ToolAnnotations};
use toolwire_tool::{Tool, ToolError, tool_fn};

/// An existing file above this is not read back for the diff: the diff would be useless
/// to a person and costly to hold.
const MAX_ORIGINAL_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFileArgs {
    /// Path of the file, relative to the workspace root. Missing parent directories are
    /// created.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// The `write_file` tool over `workspace`. Asks for approval by default: it overwrites.
pub fn write_file(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "write_file",
        "Writes `content` to a workspace file, creating it (and missing parent directories) \
         or replacing it whole. Returns the change as a diff against the previous content. \
         To change part of an existing file prefer edit_file.",
        move |args: WriteFileArgs, _ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move { write(&workspace, args).await }
        },
    )
    .with_schema(|s| {
        s.approval = ApprovalPolicy::Always;
        s.annotations = Some(ToolAnnotations {
            destructive_hint: Some(true),
            idempotent_hint: Some(true),
            ..Default::default()
        });
    })
}

async fn write(workspace: &Workspace, args: WriteFileArgs) -> Result<Value, ToolError> {
    let resolved = workspace.resolve(&args.path)?;
    let original = read_original(&resolved).await?;
    if let Some(parent) = resolved.path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| io_error(&resolved.display, &e))?;
    }
    replace_file(&resolved.path, args.content.as_bytes())
        .await
        .map_err(|e| io_error(&resolved.display, &e))?;
    let summary = match &original {
        None => format!(
            "created {}, {} lines",
            resolved.display,
            args.content.lines().count()
        ),
        Some(old) => change_summary("updated", &resolved.display, old, &args.content),
    };
    Ok(Value::diff(resolved.display, original, args.content).summary(summary))
}

/// The current text of the file, `None` when it does not exist. A file that is not UTF-8
/// is shown lossily: the diff is for a person, and the write replaces it anyway.
async fn read_original(resolved: &Resolved) -> Result<Option<String>, ToolError> {
    let display = &resolved.display;
    let meta = match tokio::fs::metadata(&resolved.path).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(display, &e)),
    };
    if meta.is_dir() {
        return Err(ToolError::with_code(
            "is_directory",
            format!("`{display}` is a directory; give the path of a file"),
        ));
    }
    if !meta.is_file() {
        return Err(not_a_file(display));
    }
    if meta.len() > MAX_ORIGINAL_BYTES {
        return Ok(Some(format!("({} bytes, not shown)", meta.len())));
    }
    let bytes = tokio::fs::read(&resolved.path)
        .await
        .map_err(|e| io_error(display, &e))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// `updated src/a.rs: +3 -1 lines`. The line diff is bounded in time: a pathological pair
/// of files must not stall the call for a summary line.
pub(crate) fn change_summary(verb: &str, path: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(250))
        .diff_lines(old, new);
    let (mut added, mut removed) = (0usize, 0usize);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    format!("{verb} {path}: +{added} -{removed} lines")
}
