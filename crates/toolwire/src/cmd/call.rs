//! `toolwire call TOOL [JSON]`: runs one tool, renders its result as it lands, stores it.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value as Json;
use toolwire_core::{Status, SuspensionReason, ToolResult};
use toolwire_runtime::{EventKind, Resolution, Scope, ToolCall};
use toolwire_store::{MessageContent, NewSession, ToolCall as StoredCall};
use toolwire_term::{LiveRenderer, TermOptions};

use crate::Outcome;
use crate::host::Host;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The tool's name, e.g. `read_file`.
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
}

pub(crate) async fn run(args: Args, data_dir: Option<&Path>) -> Result<Outcome> {
    let input: Json = match &args.input {
        None => Json::Object(Default::default()),
        Some(text) => {
            serde_json::from_str(text).with_context(|| format!("the input is not JSON: {text}"))?
        }
    };
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let host = Host::open(data_dir, &workspace, Vec::new()).await?;
    let history = &host.stores.history;
    let session = match &args.session {
        Some(id) => history
            .session(id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no session {id:?} (see `toolwire sessions`)"))?,
        None => {
            let title = format!("call {}", args.tool);
            history
                .create_session(NewSession {
                    id: None,
                    parent_id: None,
                    title: Some(title),
                })
                .await?
        }
    };
    let call_id = format!("call_{}", &uuid_like());
    // The person asked for the call: that is the user turn every provider expects first.
    let asked = format!("toolwire call {} {}", args.tool, input);
    host.stores
        .append(&session.id, MessageContent::User { text: asked })
        .await?;
    // The call is recorded as an assistant tool call, so the stored history pairs it with
    // its result like any model turn (and exports cleanly).
    let stored_call = StoredCall {
        id: call_id.clone(),
        name: args.tool.clone(),
        input: input.clone(),
        signature: None,
    };
    host.stores
        .append(
            &session.id,
            MessageContent::Assistant {
                text: String::new(),
                tool_calls: vec![stored_call],
            },
        )
        .await?;

    let opts = TermOptions::detect();
    let live = Arc::new(LiveRenderer::stdout(opts.clone()));
    live.call_started(&call_id, &args.tool, &summarize(&input));
    // Progress the tool reports drives a bar while it runs.
    let events = host.executor.events();
    let mut sub = events
        .subscribe(&session.id, events_seen(&host, &session.id).await)
        .await?;
    let bar = Arc::clone(&live);
    let progress = tokio::spawn(async move {
        while let Some(Ok(event)) = sub.next().await {
            if let EventKind::Progress {
                call_id,
                done,
                total,
                message,
            } = event.kind
            {
                bar.progress(&call_id, done, total, message.as_deref());
            }
        }
    });
    let scope = Scope::new(session.id.clone());
    let mut result = host
        .executor
        .execute(&scope, ToolCall::new(&call_id, &args.tool, input))
        .await;
    // From here on the call is stored, so every way out stores its one result: a failed
    // question becomes a denial (which also clears the pending call), a failed resolve
    // or store an error result.
    while result.status == Status::Suspended {
        let Some(s) = result.suspension.clone() else {
            break;
        };
        let resolution = ask(&args, s.reason, &s.prompt).unwrap_or_else(|e| Resolution::Deny {
            reason: Some(e.to_string()),
        });
        result = match host.executor.resolve(&s.id, resolution).await {
            Ok(r) => r,
            Err(e) => ToolResult::error_with_code(
                result.call(),
                "suspension_failed",
                format!("could not finish the suspended call: {e}"),
            ),
        };
    }
    let stored = host
        .stores
        .record_result_or_failure(&session.id, result, None)
        .await?;
    let result = match stored.content {
        MessageContent::ToolResult(r) => r,
        _ => anyhow::bail!("the store returned a message that is not a tool result"),
    };
    progress.abort();
    live.call_finished(&crate::data::for_display(&result, &host.stores, &opts).await?)?;
    eprintln!(
        "stored in session {} (toolwire show {})",
        session.id, session.id
    );
    Ok(exit_for(&result))
}

/// The session's last event number, so the progress view starts at the new ones.
async fn events_seen(host: &Host, session_id: &str) -> u64 {
    host.stores
        .history
        .last_event_seq(session_id)
        .await
        .map_or(0, |s| s.max(0) as u64)
}

/// A failed tool exits 1, so scripts can tell; the result itself was printed and stored.
fn exit_for(result: &ToolResult) -> Outcome {
    if result.status == Status::Error {
        Outcome::Reported
    } else {
        Outcome::Ok
    }
}

/// Approval: `--yes`, else ask on a terminal, else deny (nobody can answer). Input: ask on
/// a terminal, else fail.
fn ask(args: &Args, reason: SuspensionReason, prompt: &str) -> Result<Resolution> {
    let interactive = std::io::stdin().is_terminal();
    match reason {
        SuspensionReason::Approval if args.yes => Ok(Resolution::Approve),
        SuspensionReason::Approval if !interactive => Ok(Resolution::Deny {
            reason: Some("no terminal to ask for approval; pass --yes to approve".into()),
        }),
        SuspensionReason::Approval => {
            let answer = prompt_line(&format!("{prompt} [y/N] "))?;
            Ok(if matches!(answer.trim(), "y" | "Y" | "yes") {
                Resolution::Approve
            } else {
                Resolution::Deny { reason: None }
            })
        }
        SuspensionReason::Input if !interactive => Ok(Resolution::Deny {
            reason: Some(format!(
                "there is no terminal to answer the question: {prompt}"
            )),
        }),
        SuspensionReason::Input => {
            let answer = prompt_line(&format!("{prompt}\n> "))?;
            Ok(Resolution::Answer {
                value: Json::String(answer.trim_end().to_owned()),
            })
        }
    }
}

fn prompt_line(prompt: &str) -> Result<String> {
    let mut err = std::io::stderr();
    write!(err, "{prompt}")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line)
}

/// The input in one short line for the header.
fn summarize(input: &Json) -> String {
    let text = input.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// A short unique suffix for call ids: time and process id, no RNG needed.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", nanos, std::process::id())
}
