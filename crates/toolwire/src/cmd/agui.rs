//! `toolwire agui run URL PROMPT`: drives an external AG-UI agent from the terminal, with
//! no front end, and records the run as a toolwire session (the same follower as
//! `toolwire serve --agui-follow`): its text and calls are printed as they come, its tool
//! results normalized and stored, for `toolwire show` and the web app.

use anyhow::Result;
use serde_json::json;
use toolwire_agui::{FollowTarget, RunEnd, pump};
use toolwire_core::EventKind;

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// POST one user message to an AG-UI agent's endpoint, print what it does, and record
    /// the run as a toolwire session.
    Run {
        /// The agent's AG-UI endpoint (where a RunAgentInput is POSTed).
        url: String,
        /// The user message.
        prompt: String,
        /// The AG-UI thread (and so the toolwire session) to run in; a new one by
        /// default. The agent is sent the new message only.
        #[arg(long, value_name = "ID")]
        thread: Option<String>,
    },
}

pub(crate) async fn run(args: Args, place: &toolwire_agent::StoreLocation) -> Result<Outcome> {
    let Command::Run {
        url,
        prompt,
        thread,
    } = args.command;
    let target = FollowTarget::new(&url)?;
    let host = data::host(place, None, Vec::new()).await?;
    let run_id = toolwire_core::new_id("run");
    let thread = thread.unwrap_or_else(|| toolwire_core::new_id("thread"));
    let input = json!({
        "threadId": thread,
        "runId": run_id,
        "messages": [{"id": format!("{run_id}-user"), "role": "user", "content": prompt}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    });
    let (mut follower, response) = target.start(host.clone(), &input).await?;
    let session = follower.session_id().to_owned();
    let after = host.stores().events().last_event_seq(&session).await?;
    let mut feed = host.events().subscribe(&session, after).await?;
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel::<()>();
    let pumping = async {
        let interrupted = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        pump(&mut follower, response, None, interrupted).await;
        let _ = done_tx.send(());
    };
    let printing = async {
        let mut done = false;
        loop {
            let next = if done {
                // The run is over: what is left in the feed comes at once.
                match tokio::time::timeout(std::time::Duration::from_millis(300), feed.next()).await
                {
                    Ok(next) => next,
                    Err(_) => break,
                }
            } else {
                tokio::select! {
                    next = feed.next() => next,
                    _ = &mut done_rx => { done = true; continue; }
                }
            };
            let Some(Ok(event)) = next else { break };
            show(&event.kind);
        }
    };
    tokio::join!(pumping, printing);
    out::line("");
    // The session id alone on stdout's last line, whatever the run did (as the README
    // promises): `session=$(toolwire agui run … | tail -n 1)` finds it.
    out::line(&session);
    for note in follower.diagnostics() {
        out::eprintln(&format!("warning: {note}"));
    }
    out::eprintln(&format!(
        "recorded in session {session} (toolwire show {session})"
    ));
    match follower.end() {
        Some(RunEnd::Finished) => Ok(Outcome::Ok),
        Some(RunEnd::Failed(why)) => {
            out::eprintln(&format!("error: the agent's run failed: {why}"));
            Ok(Outcome::Reported)
        }
        Some(RunEnd::Dropped(why)) => {
            out::eprintln(&format!(
                "error: the agent's stream ended before its run did: {why}"
            ));
            Ok(Outcome::Reported)
        }
        None => Ok(Outcome::Reported),
    }
}

/// One recorded event, as the run goes: text on stdout, calls and results on stderr.
fn show(kind: &EventKind) {
    match kind {
        EventKind::AssistantDelta { text } => out::text(text),
        EventKind::ToolCallStarted {
            tool_name, input, ..
        } => out::eprintln(&format!(
            "→ {tool_name} {}",
            crate::data::excerpt(&input.to_string())
        )),
        EventKind::ToolResult { result, .. } => {
            let kinds: Vec<&str> = result.output.iter().map(|v| v.kind.as_str()).collect();
            let what = match &result.error {
                Some(error) => format!("error: {}", error.message),
                None => kinds.join(", "),
            };
            out::eprintln(&format!(
                "← {} {}: {what}",
                result.tool_name, result.call_id
            ));
        }
        _ => {}
    }
}
