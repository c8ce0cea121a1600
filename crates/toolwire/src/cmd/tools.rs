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
    let columns = columns();
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
        let described = format!("{summary}{notes}");
        let Some(columns) = columns else {
            out::line(&format!("{:width$}  {described}", schema.name));
            continue;
        };
        // Wrapped beside the names; below them, indented, when too little room is left.
        let (first, indent) = if columns >= width + 2 + MIN_DESCRIPTION {
            (format!("{:width$}  ", schema.name), width + 2)
        } else {
            out::line(&schema.name);
            (" ".repeat(4), 4)
        };
        let room = columns.saturating_sub(indent).max(MIN_DESCRIPTION);
        for (i, piece) in wrap(&described, room).iter().enumerate() {
            let lead = if i == 0 {
                first.clone()
            } else {
                " ".repeat(indent)
            };
            out::line(format!("{lead}{piece}").trim_end());
        }
    }
    print_servers(&servers);
    Ok(Outcome::Ok)
}

/// The fewest columns a wrapped description is given.
const MIN_DESCRIPTION: usize = 24;

/// The columns descriptions wrap to: the terminal's, or `COLUMNS` when it is set; `None`
/// (one line per tool, for a script) when neither is.
fn columns() -> Option<usize> {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let set = std::env::var("COLUMNS").is_ok_and(|c| c.trim().parse::<usize>().is_ok());
    (terminal || set).then(|| toolwire_term::TermOptions::detect().width)
}

/// `text` in lines of at most `room` characters, broken at spaces (a word longer than
/// that is cut).
fn wrap(text: &str, room: usize) -> Vec<String> {
    let room = room.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > room {
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            lines.push(word.drain(..room).collect());
        }
        if used > 0 && used + 1 + word.len() > room {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        line.extend(word.iter());
        used += word.len();
    }
    if used > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
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
