//! `toolwire export SESSION --provider P`: the exact request body `toolwire chat` would
//! send next, byte for byte: the agent loop's own request (its tools, each tool's result
//! size, its system prompt, the stream flag), over the same tools (`--workspace`, `--mcp`,
//! `--mcp-config`, toolwire's config file).

use std::path::PathBuf;

use toolwire_agent::{HostError, ProviderSettings, StoreLocation};

use anyhow::{Result, bail};
use toolwire_model::Provider;

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `toolwire sessions`).
    session: String,
    /// anthropic, openai-chat, openai-responses or gemini.
    #[arg(long)]
    provider: Provider,
    /// Characters per tool result before it is cut (default 60,000).
    #[arg(long, value_name = "N")]
    max_chars: Option<usize>,
    /// The model named in the body (default: the provider's usual one).
    #[arg(long)]
    model: Option<String>,
    /// Instructions instead of the agent's own (the system prompt adds the task tool's
    /// guidance to them, as in a chat).
    #[arg(long)]
    system: Option<String>,
    /// Where file tools work (default: the current directory), as given to `chat`.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// The body of a chat run with `--no-stream` (no stream flag).
    #[arg(long)]
    no_stream: bool,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let settings = ProviderSettings {
        provider: Some(args.provider),
        model: args.model,
        stream: !args.no_stream,
        ..ProviderSettings::default()
    };
    let mut config = settings.agent_config();
    if let Some(n) = args.max_chars {
        config.budget.max_chars = n;
    }
    if let Some(system) = args.system {
        config.instructions = system;
    }
    // The chat's tools: their names, schemas and result sizes are in the body.
    let mcp_tools = args
        .mcp
        .tools(
            place.data_dir.as_deref(),
            None,
            Some(crate::mcp::export_sampler()),
            args.workspace.as_deref(),
        )
        .await?;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    let (body, diagnostics) = match host.export(&args.session, args.provider, &config).await {
        Err(HostError::NoSession(id)) => bail!("no session {id:?} (see `toolwire sessions`)"),
        other => other?,
    };
    out::json_bytes(&body)?;
    for d in diagnostics {
        out::eprintln(&format!("note: {d}"));
    }
    Ok(Outcome::Ok)
}
