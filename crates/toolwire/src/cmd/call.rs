//! `toolwire call TOOL [JSON]`: runs one tool through the host, renders its result as it
//! lands (progress drives a bar meanwhile), and stores it.

use std::path::PathBuf;
use std::sync::Arc;
use toolwire_agent::{CallOptions, StoreLocation};

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
    let mut input: Json = match &args.input {
        None => Json::Object(Default::default()),
        Some(text) => serde_json::from_str(text)
            .with_context(|| format!("the input is not JSON: {}", data::excerpt(text)))?,
    };
    // Only the server that serves this tool is started.
    let (mcp_tools, failed) = args
        .mcp
        .tools_and_failures(
            place.data_dir.as_deref(),
            Some(&args.tool),
            None,
            args.workspace.as_deref(),
        )
        .await?;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    match host.tool(&args.tool) {
        // Its server did not start: say which and why, not "no such tool".
        None if !failed.is_empty() => {
            let why: Vec<String> = failed.iter().map(ToString::to_string).collect();
            anyhow::bail!("{} is not available: {}", args.tool, why.join("; "));
        }
        None => {}
        Some(tool) => fill_required_defaults(&mut input, &tool.schema().input_schema),
    }
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
    let call = toolwire_core::ToolCall::new(toolwire_core::new_id("call"), &args.tool, input)
        .by_person("cli");
    let mut running = host
        .run_call(&session.id, call, CallOptions::new(approver))
        .await?;
    while let Some(event) = running.next().await {
        super::draw_call_progress(&live, &event.kind);
    }
    let result = running.finish().await?;
    live.call_finished(
        data::for_display(&result, host.stores(), &opts)
            .await?
            .as_ref(),
    )?;
    // The result comes back as stored: its media named by blob key.
    super::media_hints(&result);
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

/// Fills each required property the input leaves out with its schema's `default`, as the
/// web form does: servers mark properties required and give them defaults
/// (@playwright/mcp's `scale`), and a person typing JSON should not have to repeat them.
fn fill_required_defaults(input: &mut Json, schema: &Json) {
    let (Some(fields), Some(required), Some(props)) = (
        input.as_object_mut(),
        schema.get("required").and_then(Json::as_array),
        schema.get("properties").and_then(Json::as_object),
    ) else {
        return;
    };
    for name in required.iter().filter_map(Json::as_str) {
        if let Some(default) = props.get(name).and_then(|p| p.get("default"))
            && !fields.contains_key(name)
        {
            fields.insert(name.to_owned(), default.clone());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_properties_take_their_defaults() {
        let schema = json!({"type": "object", "properties": {
            "type": {"type": "string", "default": "png"},
            "scale": {"type": "string", "enum": ["css", "device"], "default": "css"},
            "name": {"type": "string"},
            "quality": {"type": "integer", "default": 80},
        }, "required": ["scale", "name", "type"]});
        let mut input = json!({"type": "jpeg"});
        fill_required_defaults(&mut input, &schema);
        // Given values stay; optional defaults are the server's to apply.
        assert_eq!(input, json!({"type": "jpeg", "scale": "css"}));
        let mut not_an_object = json!([1]);
        fill_required_defaults(&mut not_an_object, &schema);
        assert_eq!(not_an_object, json!([1]));
    }
}
