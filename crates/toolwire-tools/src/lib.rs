//! toolwire-tools: the built-in tools (files, shell, git, CSV, images, questions), each
//! confined to a [`Workspace`].
//!
//! Take them all with [`builtin_tools`], or pick one by its constructor. Tools that change
//! the workspace or run commands (`write_file`, `edit_file`, `run`) ask for approval by
//! default ([`toolwire_tool::ApprovalPolicy::Always`]); `ask_user` is a blocking tool whose
//! answer becomes its output. `run` (process groups, pipes) exists on Unix only.

#![warn(missing_docs)]

use std::io;
use std::path::Path;
use std::sync::Arc;

use toolwire_tool::{Tool, ToolError};

mod ask;
mod edit_file;
mod git;
mod image;
mod language;
mod list_dir;
mod query_csv;
mod read_file;
#[cfg(unix)]
mod shell;
#[cfg(unix)]
mod shell_output;
mod workspace;
mod write_file;

pub use ask::{AskUser, ask_user};
pub use edit_file::edit_file;
pub use git::{GIT_STATUS_KIND, GitStatus, git_status, parse_porcelain_v2};
pub use image::view_image;
pub use language::language_for;
pub use list_dir::list_dir;
pub use query_csv::query_csv;
pub use read_file::read_file;
#[cfg(unix)]
pub use shell::{SHELL_OUTPUT, TOOLWIRE_OUTPUT_META, run};
pub use workspace::{Resolved, Workspace, WorkspaceError};
pub use write_file::write_file;

/// Every built-in tool of this module, in the order a model should see them.
pub fn builtin_tools(workspace: Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(read_file(Arc::clone(&workspace))),
        Arc::new(list_dir(Arc::clone(&workspace))),
        Arc::new(write_file(Arc::clone(&workspace))),
        Arc::new(edit_file(Arc::clone(&workspace))),
        #[cfg(unix)]
        Arc::new(run(Arc::clone(&workspace))),
        Arc::new(git_status(Arc::clone(&workspace))),
        Arc::new(query_csv(Arc::clone(&workspace))),
        Arc::new(view_image(workspace)),
        Arc::new(ask_user()),
    ]
}

/// An I/O failure on `path` (as the model wrote it) with a code a caller can act on.
pub(crate) fn io_error(path: &str, e: &io::Error) -> ToolError {
    match e.kind() {
        io::ErrorKind::NotFound => {
            ToolError::with_code("not_found", format!("`{path}` does not exist"))
        }
        io::ErrorKind::PermissionDenied => ToolError::with_code(
            "permission_denied",
            format!("permission denied for `{path}`"),
        ),
        _ => ToolError::with_code("io", format!("`{path}`: {e}")),
    }
}

/// Sockets, FIFOs and devices: opening or reading one can block forever.
pub(crate) fn not_a_file(display: &str) -> ToolError {
    ToolError::with_code(
        "not_a_file",
        format!("`{display}` is not a regular file (a FIFO, socket or device)"),
    )
}

/// Reads a regular file of at most `max` bytes; directories and oversized files get
/// errors that say what to use instead.
pub(crate) async fn read_regular_file(
    path: &Path,
    display: &str,
    max: u64,
) -> Result<Vec<u8>, ToolError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| io_error(display, &e))?;
    if meta.is_dir() {
        return Err(ToolError::with_code(
            "is_directory",
            format!("`{display}` is a directory; use list_dir to see what it holds"),
        ));
    }
    if !meta.is_file() {
        return Err(not_a_file(display));
    }
    if meta.len() > max {
        return Err(ToolError::with_code(
            "too_large",
            format!(
                "`{display}` is {} bytes, over the {max}-byte limit of this tool",
                meta.len()
            ),
        ));
    }
    tokio::fs::read(path)
        .await
        .map_err(|e| io_error(display, &e))
}
