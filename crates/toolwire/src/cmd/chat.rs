//! `toolwire chat`: the agent loop in the terminal against a provider, interactive (a line
//! of stdin per message) or one-shot with `-p`. Results are rendered as they land;
//! approvals are asked on the terminal.

use std::path::PathBuf;
use std::sync::Arc;
use toolwire_agent::StoreLocation;

use anyhow::Result;
use toolwire_agent::{HostAgent, StopReason, TurnOutcome};
use toolwire_core::{Event, EventKind, Status};
use toolwire_store::NewSession;
use toolwire_term::{LiveRenderer, TermOptions};
use toolwire_tool::CancellationToken;

use std::borrow::Cow;

use crate::Outcome;
use crate::approve::{Lines, TermApprover, stdin_lines};
use crate::{data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    provider: crate::provider::ProviderArgs,
    /// One message, answered, then exit (else read messages from stdin, one per line).
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    prompt: Option<String>,
    /// Where file tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Approve every tool call without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Model requests per message before the turn stops.
    #[arg(long, default_value_t = toolwire_agent::DEFAULT_MAX_ITERATIONS)]
    max_iterations: u32,
    /// Wait for whole replies instead of streaming text as it is written.
    #[arg(long)]
    no_stream: bool,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    // The provider is checked before anything is opened.
    let settings = args
        .provider
        .settings(args.max_iterations, !args.no_stream)?;
    // The servers' sampling requests go to the chat's own provider.
    let sampler = crate::mcp::sampler(&settings);
    let mcp_tools = args
        .mcp
        .tools(
            place.data_dir.as_deref(),
            None,
            sampler,
            args.workspace.as_deref(),
        )
        .await?;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    let lines = stdin_lines();
    let opts = TermOptions::detect();
    let live = Arc::new(LiveRenderer::with_results_to(opts.clone(), out::Stdout));
    let approver = Arc::new(TermApprover {
        lines: Arc::clone(&lines),
        yes: args.yes,
        terminal_only: false,
        live: Some(Arc::clone(&live)),
    });
    let agent = host.agent(&settings, approver)?;
    let mut chat = Chat {
        agent,
        stores: host.stores().clone(),
        opts,
        live,
        session: None,
        streamed_text: false,
    };
    let result = match &args.prompt {
        Some(prompt) => chat.turn(prompt).await.map(|_| ()),
        None => chat.interactive(&lines).await,
    };
    chat.finish().await;
    result.map(|()| Outcome::Ok)
}

struct Chat {
    agent: HostAgent,
    /// To read a result's images back for a terminal that can draw them (events name
    /// media by blob, as the history does).
    stores: toolwire_store::Stores,
    opts: TermOptions,
    live: Arc<LiveRenderer>,
    session: Option<String>,
    /// Whether text of the current model reply was printed as it streamed.
    streamed_text: bool,
}

impl Chat {
    async fn interactive(&mut self, lines: &Lines) -> Result<()> {
        out::eprintln(&format!(
            "toolwire chat ({}, {}): one message per line; Ctrl-C stops a turn, Ctrl-D ends.",
            self.agent.agent().provider(),
            self.agent.agent().config().model
        ));
        loop {
            out::prompt("> ");
            let line = tokio::select! {
                line = async { lines.lock().await.recv().await } => line,
                _ = tokio::signal::ctrl_c() => None,
            };
            let Some(line) = line else {
                out::eprintln("");
                return Ok(());
            };
            if line.trim().is_empty() {
                continue;
            }
            // A failed turn (the provider refused, the network broke) is reported and
            // the chat goes on: the history is valid for the next message.
            if let Err(e) = self.turn(&line).await {
                out::eprintln(&format!("error: {}", crate::error_line(&e)));
            }
        }
    }

    /// One message to the end of its turn, printing as things happen.
    async fn turn(&mut self, text: &str) -> Result<TurnOutcome> {
        let session = self.session_for(text).await?;
        let cancel = CancellationToken::new();
        let mut turn = self
            .agent
            .turn_with_cancel(&session, text, cancel.clone())
            .await?;
        // One listener for the whole turn: a Ctrl-C that comes while an event is being
        // shown (between two polls) is kept; a listener made anew at each poll, as before,
        // only hears signals sent after it was made, and missed that one.
        let mut interrupt = std::pin::pin!(tokio::signal::ctrl_c());
        loop {
            tokio::select! {
                event = turn.next() => match event {
                    Some(mut event) => {
                        if let EventKind::ToolResult { result, .. } = &mut event.kind
                            && let Ok(Cow::Owned(shown)) =
                                data::for_display(result, &self.stores, &self.opts).await
                        {
                            *std::sync::Arc::make_mut(result) = shown;
                        }
                        self.show(&event);
                    }
                    None => break,
                },
                // Heard once: the guard keeps the finished listener from being polled again.
                _ = &mut interrupt, if !cancel.is_cancelled() => {
                    out::eprintln("\n^C: stopping the turn…");
                    cancel.cancel();
                }
            }
        }
        let outcome = turn.finish().await?;
        if !self.streamed_text && !outcome.text.is_empty() {
            out::line(&outcome.text);
        } else if self.streamed_text {
            out::line("");
        }
        self.streamed_text = false;
        match outcome.stop {
            StopReason::Done => {}
            StopReason::Cancelled => out::eprintln("(turn cancelled)"),
            StopReason::MaxIterations => out::eprintln(&format!(
                "(stopped after {} model requests; send another message to continue)",
                outcome.iterations
            )),
        }
        Ok(outcome)
    }

    /// The session, created with the first message as its title.
    async fn session_for(&mut self, first: &str) -> Result<String> {
        if let Some(id) = &self.session {
            return Ok(id.clone());
        }
        let title: String = first.chars().take(60).collect();
        let session = self
            .agent
            .start_session(NewSession {
                title: Some(title),
                ..NewSession::default()
            })
            .await?;
        self.session = Some(session.id.clone());
        Ok(session.id)
    }

    fn show(&mut self, event: &Event) {
        if matches!(event.kind, EventKind::ToolCallStarted { .. }) && self.streamed_text {
            // The model's streamed text ends its line before the call's line starts.
            out::line("");
            self.streamed_text = false;
        }
        if super::draw_call_progress(&self.live, &event.kind) {
            return;
        }
        match &event.kind {
            EventKind::AssistantDelta { text } => {
                out::text(text);
                self.streamed_text = true;
            }
            EventKind::ToolResult { result, .. } => {
                // A suspended call is asked about right away; its final result follows.
                if result.status != Status::Suspended
                    && let Err(e) = self.live.call_finished(result)
                {
                    out::eprintln(&format!("error: cannot print a result: {e}"));
                }
            }
            _ => {}
        }
    }

    async fn finish(&mut self) {
        if let Some(id) = &self.session {
            self.agent.end_session(id).await;
            out::eprintln(&format!("session {id} (toolwire show {id})"));
        }
    }
}
