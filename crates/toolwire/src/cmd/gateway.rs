//! `toolwire gateway`: toolwire as an MCP server on stdin/stdout, for a host (Claude Code,
//! Codex, Gemini CLI, Cursor, VS Code, Claude Desktop) to start instead of its MCP
//! servers: their tools, through toolwire's pipeline. Nothing but MCP goes to stdout.

use std::path::PathBuf;

use anyhow::{Result, bail};
use toolwire_agent::StoreLocation;
use toolwire_gateway::{Gateway, HostProfile, profile::HOSTS};

use crate::Outcome;
use crate::data;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The host this gateway serves, for its result budget and quirks: claude-code,
    /// claude-desktop, codex, gemini, cursor, vscode or generic.
    #[arg(long, default_value = "generic", value_name = "HOST")]
    host: String,
    /// Offer toolwire's built-in tools (files, `run`) too, confined to the workspace.
    #[arg(long)]
    builtins: bool,
    /// Where the built-in tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let Some(profile) = HostProfile::named(&args.host) else {
        bail!("unknown host {:?}; one of: {}", args.host, HOSTS.join(", "));
    };
    let (mcp_tools, failed) = args
        .mcp
        .tools_and_failures(
            place.data_dir.as_deref(),
            None,
            None,
            args.workspace.as_deref(),
        )
        .await?;
    // stdout is the protocol: what went wrong with a server is said on stderr.
    for failure in &failed {
        eprintln!("toolwire gateway: {failure}");
    }
    let host =
        data::host_for_gateway(place, args.workspace.as_deref(), mcp_tools, args.builtins).await?;
    toolwire_gateway::serve_stdio(Gateway::new(host, profile)).await?;
    Ok(Outcome::Ok)
}
