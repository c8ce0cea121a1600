//! `list_dir`: a directory of the workspace, to a depth, as a `file_list` value.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::{EntryType, FileEntry, Value};

use crate::io_error;
use crate::workspace::Workspace;
use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

/// Entries listed before the listing stops with `truncated: true`: a model rarely needs
/// more, and a `node_modules` at depth 3 has hundreds of thousands.
pub(crate) const MAX_ENTRIES: usize = 1000;
pub(crate) const MAX_DEPTH: u32 = 10;

/// Directories listed as entries but not descended into: their content is noise to a
/// model and can be huge.
const NOT_DESCENDED: &[&str] = &[".git"];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDirArgs {
    /// Directory to list, relative to the workspace root. Default: the root.
    #[serde(default)]
    pub path: Option<String>,
    /// How deep to go: 1 lists the directory's own entries, 2 also its subdirectories',
    /// and so on (at most 10). Default 1.
    #[schemars(range(min = 1, max = 10))]
    #[serde(default)]
    pub depth: Option<u32>,
}

/// The `list_dir` tool over `workspace`.
pub fn list_dir(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "list_dir",
        "Lists a directory of the workspace (default the root), `depth` levels deep \
         (default 1). Each entry has a path relative to the listed directory, a type \
         (file, directory or symlink), a size for files and a modification time. Symlinks \
         are not followed; `.git` is not descended into. Stops at 1000 entries with \
         `truncated: true`.",
        move |args: ListDirArgs, _ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move {
                let path = args.path.unwrap_or_else(|| ".".to_owned());
                let depth = args.depth.unwrap_or(1).clamp(1, MAX_DEPTH);
                let resolved = workspace.resolve(&path)?;
                let display = resolved.display.clone();
                let listing = tokio::task::spawn_blocking(move || {
                    walk(&resolved.path, &resolved.display, depth)
                })
                .await
                .map_err(|e| ToolError::failed(format!("listing `{path}` failed: {e}")))??;
                let value = Value::file_list(display, listing.entries, listing.truncated);
                let value = if listing.truncated {
                    let n = MAX_ENTRIES;
                    value.summary(format!("{n} entries (truncated at {n})"))
                } else {
                    value
                };
                Ok::<_, ToolError>(value)
            }
        },
    )
    .with_schema(|s| {
        s.annotations = Some(toolwire_tool::ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
    })
}

struct Listing {
    entries: Vec<FileEntry>,
    truncated: bool,
}

/// Depth-first with sorted names, so a directory's content follows it as in a tree.
fn walk(dir: &Path, display: &str, depth: u32) -> Result<Listing, ToolError> {
    let meta = std::fs::metadata(dir).map_err(|e| io_error(display, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::with_code(
            "not_a_directory",
            format!("`{display}` is not a directory; use read_file to read a file"),
        ));
    }
    let mut listing = Listing {
        entries: Vec::new(),
        truncated: false,
    };
    let children = read_sorted(dir).map_err(|e| io_error(display, &e))?;
    walk_children(children, "", 1, depth, &mut listing);
    Ok(listing)
}

/// Appends `children` (and, below `depth`, their subdirectories' entries) to `listing`;
/// stops when it is full. Recursion is bounded by `MAX_DEPTH`.
fn walk_children(
    children: Vec<(String, PathBuf)>,
    prefix: &str,
    level: u32,
    depth: u32,
    listing: &mut Listing,
) {
    for (name, child) in children {
        if listing.entries.len() >= MAX_ENTRIES {
            listing.truncated = true;
            return;
        }
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(meta) = std::fs::symlink_metadata(&child) else {
            // Removed while listing: nothing to show.
            continue;
        };
        let ft = meta.file_type();
        let entry_type = if ft.is_symlink() {
            EntryType::Symlink
        } else if ft.is_dir() {
            EntryType::Directory
        } else {
            EntryType::File
        };
        listing.entries.push(FileEntry {
            name: rel.clone(),
            entry_type,
            size: (entry_type == EntryType::File).then_some(meta.len()),
            modified: meta
                .modified()
                .ok()
                .map(|t| humantime::format_rfc3339_seconds(t).to_string()),
        });
        if entry_type == EntryType::Directory
            && level < depth
            && !NOT_DESCENDED.contains(&name.as_str())
        {
            // An unreadable subdirectory is shown as an entry with nothing under it.
            if let Ok(grandchildren) = read_sorted(&child) {
                walk_children(grandchildren, &rel, level + 1, depth, listing);
            }
        }
    }
}

fn read_sorted(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}
