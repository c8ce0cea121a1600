//! The host and stores under the data directory (`--data-dir`, else `$TOOLWIRE_DATA_DIR`,
//! else the platform data directory) or at `--database-url`/`--blob-url`, and small helpers
//! the commands share.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use toolwire_agent::{Host, HostBuilder, StoreLocation};
use toolwire_core::{ToolResult, WellKnown};
use toolwire_store::{DEFAULT_REHYDRATE_LIMIT, Stores, rehydrate_images};
use toolwire_term::{ImageProtocol, TermOptions};
use toolwire_tool::{Tool, ToolSource};

/// The stores alone, for commands that only read or tidy them.
pub(crate) async fn open(place: &StoreLocation) -> Result<Stores> {
    Ok(place.open().await?)
}

/// The host with the built-in tools confined to `workspace` (default: the current
/// directory), and `extra` tools (an MCP server's) beside them.
pub(crate) async fn host(
    place: &StoreLocation,
    workspace: Option<&Path>,
    extra: Vec<Arc<dyn Tool>>,
) -> Result<Host> {
    Ok(builder(place, workspace)?.tools(extra).build().await?)
}

/// [`host_with_sources`] for the MCP gateway: the built-ins only when asked for
/// (`read_result` always).
pub(crate) async fn host_for_gateway(
    place: &StoreLocation,
    workspace: Option<&Path>,
    sources: Vec<Arc<dyn ToolSource>>,
    builtins: bool,
) -> Result<Host> {
    let mut builder = builder(place, workspace)?.sources(sources);
    if !builtins {
        builder = builder.without_builtins();
    }
    Ok(builder.build().await?)
}

/// [`host`] whose MCP servers are still connecting: their tools arrive later
/// (`Host::replace_tools`), their state is listed by `Host::sources`.
pub(crate) async fn host_with_sources(
    place: &StoreLocation,
    workspace: Option<&Path>,
    sources: Vec<Arc<dyn ToolSource>>,
) -> Result<Host> {
    Ok(builder(place, workspace)?.sources(sources).build().await?)
}

fn builder(place: &StoreLocation, workspace: Option<&Path>) -> Result<HostBuilder> {
    let workspace = match workspace {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let builder = Host::builder().workspace(workspace).location(place.clone());
    Ok(match crate::telemetry::tracer() {
        Some(tracer) => builder.tracer(tracer),
        None => builder,
    })
}

/// The result as the terminal should draw it: when it can draw images, blob-backed ones
/// are read back inline, so a reloaded image is shown, not just named.
/// Borrowed when nothing is to be read back, so a large text result is not copied.
pub(crate) async fn for_display<'a>(
    result: &'a ToolResult,
    stores: &Stores,
    opts: &TermOptions,
) -> Result<Cow<'a, ToolResult>> {
    if opts.images == ImageProtocol::None
        || !result.output.iter().any(|v| v.is_kind(WellKnown::Image))
    {
        return Ok(Cow::Borrowed(result));
    }
    Ok(Cow::Owned(
        rehydrate_images(result, stores.blobs().as_ref(), DEFAULT_REHYDRATE_LIMIT).await?,
    ))
}

/// At most this many characters of an input are quoted back in an error.
const EXCERPT_CHARS: usize = 200;

/// A short excerpt of input quoted in an error line: a 200 MB input must not become a
/// 200 MB message.
pub(crate) fn excerpt(text: &str) -> String {
    toolwire_core::humanize::excerpt(text, EXCERPT_CHARS)
}
