//! `toolwire chat`: the agent loop in the terminal against a provider, interactive (a line
//! of stdin per message) or one-shot with `-p`. Results are rendered as they land;
//! approvals are asked on the terminal.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value as Json;
use tokio::sync::{Mutex, mpsc};
use toolwire_core::Status;
use toolwire_model::Provider;
use toolwire_model::client::{ClientConfig, ProviderClient};
use toolwire_runtime::agent::{
    Agent, AgentConfig, ApprovalRequest, Approver, CancellationToken, StopReason, TaskTool,
    TurnOutcome,
};
use toolwire_runtime::{Event, EventKind, Resolution, Subscription, Tool};
use toolwire_store::NewSession;
use toolwire_term::{LiveRenderer, TermOptions};

use crate::Outcome;
use crate::host::Host;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// anthropic, openai-chat, openai-responses or gemini (default: the first whose API
    /// key is set, else anthropic).
    #[arg(long, env = "TOOLWIRE_PROVIDER")]
    provider: Option<Provider>,
    /// The model (default per provider, e.g. claude-sonnet-4-5, gpt-4.1, gemini-2.5-flash).
    #[arg(long, env = "TOOLWIRE_MODEL")]
    model: Option<String>,
    /// Another endpoint for the provider, e.g. a local OpenAI-compatible server
    /// (http://127.0.0.1:11434/v1); no API key is then required.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
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
    #[arg(long, default_value_t = toolwire_runtime::agent::DEFAULT_MAX_ITERATIONS)]
    max_iterations: u32,
    /// Wait for whole replies instead of streaming text as it is written.
    #[arg(long)]
    no_stream: bool,
}

/// The provider's usual key variable.
fn key_var(provider: Provider) -> &'static str {
    match provider {
        Provider::Anthropic => "ANTHROPIC_API_KEY",
        Provider::OpenaiChat | Provider::OpenaiResponses => "OPENAI_API_KEY",
        Provider::Gemini => "GEMINI_API_KEY",
    }
}

fn default_model(provider: Provider) -> &'static str {
    match provider {
        Provider::Anthropic => "claude-sonnet-4-5",
        Provider::OpenaiChat | Provider::OpenaiResponses => "gpt-4.1",
        Provider::Gemini => "gemini-2.5-flash",
    }
}

fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// The provider asked for, else the first whose key (or, for OpenAI, base URL) is set.
fn pick_provider(args: &Args) -> Provider {
    args.provider.unwrap_or_else(|| {
        [
            (Provider::Anthropic, "ANTHROPIC_API_KEY"),
            (Provider::OpenaiChat, "OPENAI_API_KEY"),
            (Provider::OpenaiChat, "OPENAI_BASE_URL"),
            (Provider::Gemini, "GEMINI_API_KEY"),
        ]
        .into_iter()
        .find(|(_, var)| env(var).is_some())
        .map_or(Provider::Anthropic, |(p, _)| p)
    })
}

/// Where to connect: `--base-url` (key optional), else the provider's usual variables.
fn client_config(provider: Provider, base_url: Option<&str>) -> Result<ClientConfig> {
    match base_url {
        Some(url) => Ok(ClientConfig::new(provider, url, env(key_var(provider)))),
        None => ClientConfig::from_env(provider).map_err(|_| {
            anyhow::anyhow!(
                "no API key for {provider}: set {} (or pass --base-url for a local server)",
                key_var(provider)
            )
        }),
    }
}

pub(crate) async fn run(args: Args, data_dir: Option<&Path>) -> Result<Outcome> {
    let provider = pick_provider(&args);
    let config = client_config(provider, args.base_url.as_deref())?;
    let client = ProviderClient::new(config)?;
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let task = TaskTool::new();
    let host = Host::open(
        data_dir,
        &workspace,
        vec![Arc::new(task.clone()) as Arc<dyn Tool>],
    )
    .await?;
    let lines = stdin_lines();
    let approver = Arc::new(TermApprover {
        lines: Arc::clone(&lines),
        yes: args.yes,
    });
    let mut agent_config = AgentConfig::new(
        args.model
            .clone()
            .unwrap_or_else(|| default_model(provider).to_owned()),
    );
    agent_config.max_iterations = args.max_iterations;
    agent_config.stream = !args.no_stream;
    let agent = Agent::new(
        client,
        agent_config,
        Arc::clone(&host.executor),
        host.stores.clone(),
        approver,
    );
    task.bind(&agent);
    let live = LiveRenderer::stdout(TermOptions::detect());
    let mut chat = Chat {
        agent,
        live,
        session: None,
        subscription: None,
        streamed_text: false,
        shown_seq: 1,
    };
    let result = match &args.prompt {
        Some(prompt) => chat.turn(prompt).await.map(|_| ()),
        None => chat.interactive(&lines).await,
    };
    chat.finish().await;
    result.map(|()| Outcome::Ok)
}

struct Chat {
    agent: Arc<Agent>,
    live: LiveRenderer,
    session: Option<String>,
    subscription: Option<Subscription>,
    /// Whether text of the current model reply was printed as it streamed.
    streamed_text: bool,
    /// The last event of the session shown.
    shown_seq: u64,
}

impl Chat {
    async fn interactive(
        &mut self,
        lines: &Arc<Mutex<mpsc::UnboundedReceiver<String>>>,
    ) -> Result<()> {
        eprintln!(
            "toolwire chat ({}, {}): one message per line; Ctrl-C stops a turn, Ctrl-D ends.",
            self.agent.provider(),
            self.agent.config().model
        );
        loop {
            eprint!("> ");
            let _ = std::io::stderr().flush();
            let line = tokio::select! {
                line = async { lines.lock().await.recv().await } => line,
                _ = tokio::signal::ctrl_c() => None,
            };
            let Some(line) = line else {
                eprintln!();
                return Ok(());
            };
            if line.trim().is_empty() {
                continue;
            }
            // A failed turn (the provider refused, the network broke) is reported and
            // the chat goes on: the history is valid for the next message.
            if let Err(e) = self.turn(&line).await {
                eprintln!("error: {e:#}");
            }
        }
    }

    /// One message to the end of its turn, printing as things happen.
    async fn turn(&mut self, text: &str) -> Result<TurnOutcome> {
        let session = self.session_for(text).await?;
        let cancel = CancellationToken::new();
        let agent = Arc::clone(&self.agent);
        let turn = agent.run_turn(&session, text, cancel.clone());
        tokio::pin!(turn);
        let mut subscription = self.subscription.take();
        let outcome = loop {
            tokio::select! {
                outcome = &mut turn => break outcome,
                Some(Ok(event)) = next_event(&mut subscription) => self.show(&event),
                _ = tokio::signal::ctrl_c(), if !cancel.is_cancelled() => {
                    eprintln!("\n^C: stopping the turn…");
                    cancel.cancel();
                }
            }
        };
        // Print what the turn emitted and the loop has not shown yet.
        let last = self
            .agent
            .stores()
            .history
            .last_event_seq(&session)
            .await
            .ok()
            .and_then(|s| u64::try_from(s).ok())
            .unwrap_or(0);
        if let Some(sub) = subscription.as_mut() {
            while self.shown_seq < last {
                match tokio::time::timeout(std::time::Duration::from_secs(2), sub.next()).await {
                    Ok(Some(Ok(event))) => self.show(&event),
                    _ => break,
                }
            }
        }
        self.subscription = subscription;
        let outcome = outcome?;
        if !self.streamed_text && !outcome.text.is_empty() {
            println!("{}", outcome.text);
        } else if self.streamed_text {
            println!();
        }
        self.streamed_text = false;
        match outcome.stop {
            StopReason::Done => {}
            StopReason::Cancelled => eprintln!("(turn cancelled)"),
            StopReason::MaxIterations => eprintln!(
                "(stopped after {} model requests; send another message to continue)",
                outcome.iterations
            ),
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
        let events = Arc::clone(self.agent.executor().events());
        // From 1: `session_started` was already emitted, and is not shown.
        self.subscription = Some(events.subscribe(&session.id, 1).await?);
        self.session = Some(session.id.clone());
        Ok(session.id)
    }

    fn show(&mut self, event: &Event) {
        self.shown_seq = self.shown_seq.max(event.seq);
        match &event.kind {
            EventKind::AssistantDelta { text } => {
                print!("{text}");
                let _ = std::io::stdout().flush();
                self.streamed_text = true;
            }
            EventKind::ToolCallStarted {
                call_id,
                tool_name,
                input,
            } => {
                if self.streamed_text {
                    println!();
                    self.streamed_text = false;
                }
                self.live
                    .call_started(call_id, tool_name, &summarize(input));
            }
            EventKind::Progress {
                call_id,
                done,
                total,
                message,
            } => self
                .live
                .progress(call_id, *done, *total, message.as_deref()),
            EventKind::ToolResult { result, .. } => {
                // A suspended call is asked about right away; its final result follows.
                if result.status != Status::Suspended
                    && let Err(e) = self.live.call_finished(result)
                {
                    eprintln!("error: cannot print a result: {e}");
                }
            }
            _ => {}
        }
    }

    async fn finish(&mut self) {
        if let Some(id) = &self.session {
            self.agent.end_session(id).await;
            eprintln!("session {id} (toolwire show {id})");
        }
    }
}

async fn next_event(sub: &mut Option<Subscription>) -> Option<Result<Event, String>> {
    match sub {
        Some(s) => s.next().await.map(|r| r.map_err(|e| e.to_string())),
        None => std::future::pending().await,
    }
}

fn summarize(input: &Json) -> String {
    let text = input.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Stdin as lines, read on a thread of its own so a turn never blocks on it. Messages
/// and approval answers share it.
fn stdin_lines() -> Arc<Mutex<mpsc::UnboundedReceiver<String>>> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Arc::new(Mutex::new(rx))
}

/// Asks on the terminal: y(es), n(o) [reason], or d(etails) to see the whole input.
struct TermApprover {
    lines: Arc<Mutex<mpsc::UnboundedReceiver<String>>>,
    yes: bool,
}

impl TermApprover {
    async fn ask(&self, prompt: &str) -> Option<String> {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
        self.lines.lock().await.recv().await
    }
}

impl Approver for TermApprover {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Resolution> + Send + 'a>> {
        Box::pin(async move {
            if request.is_question() {
                let answer = self
                    .ask(&format!("{}\n? ", request.suspension.prompt))
                    .await;
                return Resolution::Answer {
                    value: Json::String(answer.unwrap_or_default()),
                };
            }
            if self.yes {
                return Resolution::Approve;
            }
            let question = format!(
                "Allow {}({})? [y/n/d] ",
                request.call.name,
                summarize(&request.call.input)
            );
            loop {
                let Some(answer) = self.ask(&question).await else {
                    eprintln!();
                    return Resolution::Deny {
                        reason: Some(
                            "nobody answered (stdin is closed); pass --yes to approve".into(),
                        ),
                    };
                };
                let answer = answer.trim();
                let (word, rest) = answer.split_once(' ').unwrap_or((answer, ""));
                match word {
                    "y" | "Y" | "yes" => return Resolution::Approve,
                    "n" | "N" | "no" => {
                        let reason = rest.trim();
                        return Resolution::Deny {
                            reason: (!reason.is_empty()).then(|| reason.to_owned()),
                        };
                    }
                    "d" | "details" => {
                        let pretty = serde_json::to_string_pretty(&request.call.input)
                            .unwrap_or_else(|_| request.call.input.to_string());
                        eprintln!("{} {}\n{pretty}", request.call.name, request.call.id);
                    }
                    _ => eprintln!("y to run it, n [reason] to refuse, d for details"),
                }
            }
        })
    }
}
