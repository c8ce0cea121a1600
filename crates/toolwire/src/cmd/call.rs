//! `toolwire call TOOL [JSON]`: runs one tool through the host, renders its result as it
//! lands (progress drives a bar meanwhile), and stores it.

use std::path::PathBuf;
use std::sync::Arc;
use toolwire_agent::StoreLocation;

use anyhow::{Context, Result};
use serde_json::Value as Json;
use toolwire_core::Status;
use toolwire_term::{LiveRenderer, TermOptions};

use crate::Outcome;
use crate::approve::{TermApprover, stdin_lines};
use crate::{data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The tool's name, e.g. `read_file`, or an MCP server's `NAME__TOOL`.
    tool: String,
    /// The tool's input as JSON (default `{}`).
    input: Option<String>,
    /// Where file tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Approve the call without asking, if the tool needs approval.
    #[arg(long, short = 'y')]
    yes: bool,
    /// The session to record the call in (default: a new one).
    #[arg(long)]
    session: Option<String>,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let input: Json = match &args.input {
        None => Json::Object(Default::default()),
        Some(text) => serde_json::from_str(text)
            .with_context(|| format!("the input is not JSON: {}", data::excerpt(text)))?,
    };
    // Only the server that serves this tool is started.
    let mcp_tools = args
        .mcp
        .tools(place.data_dir.as_deref(), Some(&args.tool), None)
        .await?;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    let session = host
        .session(args.session.as_deref(), &format!("call {}", args.tool))
        .await
        .map_err(|e| match e {
            toolwire_agent::HostError::NoSession(id) => {
                anyhow::anyhow!("no session {id:?} (see `toolwire sessions`)")
            }
            other => other.into(),
        })?;
    let opts = TermOptions::detect();
    let live = Arc::new(LiveRenderer::with_results_to(opts.clone(), out::Stdout));
    let approver = Arc::new(TermApprover {
        lines: stdin_lines(),
        yes: args.yes,
        terminal_only: true,
        live: Some(Arc::clone(&live)),
    });
    let mut running = host.call(&session.id, &args.tool, input, approver).await?;
    while let Some(event) = running.next().await {
        super::draw_call_progress(&live, &event.kind);
    }
    let result = running.finish().await??;
    live.call_finished(
        data::for_display(&result, host.stores(), &opts)
            .await?
            .as_ref(),
    )?;
    // The stored result names its media by blob key (the returned one may carry bytes).
    if let Ok(Some(stored)) = host.stores().history.find_result(&result.call_id).await {
        super::media_hints(&stored.result);
    }
    out::eprintln(&format!(
        "stored in session {} (toolwire show {})",
        session.id, session.id
    ));
    // A failed tool exits 1, so scripts can tell; the result itself was printed and stored.
    Ok(if result.status == Status::Error {
        Outcome::Reported
    } else {
        Outcome::Ok
    })
}
