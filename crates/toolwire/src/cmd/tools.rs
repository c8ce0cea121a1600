//! `toolwire tools [--mcp ...] [--json]`: the tools a call or a chat can use, built-in and
//! MCP, with what they do, or their whole schemas as JSON.

use std::path::PathBuf;
use std::sync::Arc;

use toolwire_agent::StoreLocation;
use toolwire_mcp::McpServer;
use toolwire_tool::{SourceState, SourceStatus};

use anyhow::Result;

use crate::Outcome;
use crate::{data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print every tool's schema (name, description, inputSchema, outputSchema, ...) as a
    /// JSON array.
    #[arg(long)]
    json: bool,
    /// Where file tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let servers = args.mcp.servers(
        place.data_dir.as_deref(),
        None,
        None,
        args.workspace.as_deref(),
    )?;
    // Failures go to stderr too: a `--json` reader sees no server section.
    let (mcp_tools, _) = crate::mcp::connect(servers.clone()).await;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    let registry = host.tools();
    if args.json {
        let schemas: Vec<_> = registry.schemas().collect();
        out::json(&schemas)?;
        return Ok(Outcome::Ok);
    }
    let width = registry.schemas().map(|s| s.name.len()).max().unwrap_or(0);
    for schema in registry.schemas() {
        // The first line of a description is its summary; MCP servers write long ones.
        let summary = schema.description.lines().next().unwrap_or_default();
        let mut notes = Vec::new();
        if schema.hidden_from_model {
            notes.push("not offered to the model");
        }
        if schema.approval == toolwire_tool::ApprovalPolicy::Always {
            notes.push("asks for approval");
        }
        // What the tool says of itself (MCP annotations: hints from its server).
        if let Some(a) = &schema.annotations {
            let hints = [
                (a.read_only_hint, "read-only"),
                (
                    a.destructive_hint
                        .filter(|_| a.read_only_hint != Some(true)),
                    "destructive",
                ),
                (a.idempotent_hint, "idempotent"),
                (a.open_world_hint, "open world"),
            ];
            notes.extend(
                hints
                    .into_iter()
                    .filter(|(hint, _)| *hint == Some(true))
                    .map(|(_, label)| label),
            );
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        // Names and descriptions come from MCP servers too: sanitized on the way out.
        out::line(&format!("{:width$}  {summary}{notes}", schema.name));
    }
    print_servers(&servers);
    Ok(Outcome::Ok)
}

/// Each MCP server's state: ready with its revision and tool count, or failed and why.
fn print_servers(servers: &[Arc<McpServer>]) {
    if servers.is_empty() {
        return;
    }
    out::line("");
    out::line("MCP servers:");
    let statuses: Vec<SourceStatus> = servers.iter().map(|s| s.status()).collect();
    let width = statuses.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for status in statuses {
        let state = match (status.state, &status.reason) {
            (SourceState::Ready, _) => format!(
                "ready ({}, {} tools)",
                status.protocol.as_deref().unwrap_or("unknown revision"),
                status.tools.len()
            ),
            (state, Some(why)) => format!("{}: {why}", state.as_str()),
            (state, None) => state.as_str().to_owned(),
        };
        // Names and reasons come from configs and servers: sanitized on the way out.
        out::line(&format!("  {:width$}  {state}", status.name));
    }
}
