//! toolwire-tool: everything a tool author needs, and nothing that runs tools.
//!
//! A [`Tool`] has a [`ToolSchema`] and an async `execute`; [`tool_fn`] builds one from a
//! typed input and an async fn. What a running tool may see and do (its call, a cancel,
//! widgets, progress) is in [`ToolContext`]. This crate has no SQL, HTTP or process
//! dependencies, so a crate that only defines tools stays light; the executor that runs
//! them is `toolwire-runtime`.

#![warn(missing_docs)]

mod context;
mod reconfigure;
mod schema;
mod source;
mod tool;

pub use context::{ProgressSink, Received, ToolContext};
pub use reconfigure::reconfigure;
pub use schema::{
    ApprovalPolicy, ExecutionMode, ToolAnnotations, ToolExample, ToolOrigin, ToolSchema,
    is_valid_tool_name,
};
pub use source::{LoginStart, SourceLogin, SourceState, SourceStatus, ToolSource};
/// The cancel a tool watches, re-exported so tool crates need not name tokio-util.
pub use tokio_util::sync::CancellationToken;
pub use tool::{FnTool, Output, Resume, Tool, ToolError, tool_fn};
