//! `toolwire tools [--mcp ...] [--json]`: the tools a call or a chat can use, built-in and
//! MCP, with what they do, or their whole schemas as JSON.

use std::path::PathBuf;
use toolwire_agent::StoreLocation;

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
    let mcp_tools = args
        .mcp
        .tools(
            place.data_dir.as_deref(),
            None,
            None,
            args.workspace.as_deref(),
        )
        .await?;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    let registry = host.executor().registry();
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
        if schema.approval == toolwire_agent::ApprovalPolicy::Always {
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
    Ok(Outcome::Ok)
}
